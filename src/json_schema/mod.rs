//! JSON Schema -> regex (work in progress).
