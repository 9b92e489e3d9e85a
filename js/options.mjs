// Written from src/wasm/options_table.rs by tests/docs.rs: do not edit; after a change to
// that table, `LOGITMASK_UPDATE_DOCS=1 cargo test --test lib docs::` writes it again.
// The keys each options interface of the API accepts (an interface that extends another
// accepts its keys too), for JS code that splits one options object between calls.
export const OPTION_KEYS = Object.freeze({
  IndexOptions: Object.freeze(["lazy", "asciiClasses", "dfaSizeLimit", "determinizeSizeLimit", "maxStates", "maxWork", "maskCacheBytes", "cacheBytes"]),
  JsonSchemaOptions: Object.freeze(["whitespace", "maxRecursionDepth", "anyValueDepth", "propertyOrder", "allowAdditionalProperties", "maxRegexSize", "unknownFormatsAreErrors", "maxWork"]),
  GrammarOptions: Object.freeze(["syntax", "maxRecursionDepth"]),
  VocabularyOptions: Object.freeze(["maxWork"]),
  TokenizerOptions: Object.freeze(["eosTokenIds", "maxWork"]),
  TiktokenOptions: Object.freeze(["eosTokenIds", "maxWork", "specialTokens"]),
  GuideOptions: Object.freeze(["maxRollback"]),
});
