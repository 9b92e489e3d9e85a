//! Tokenizer loaders: build a [`Vocabulary`](crate::Vocabulary) from real tokenizer files
//! (work in progress).
