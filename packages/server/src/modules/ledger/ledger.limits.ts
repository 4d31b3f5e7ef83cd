/** One operation moves 1 to 10^12 credits (docs/api.md section 1). */
export const AMOUNT_MAX = 1_000_000_000_000;
/** 2^53 - 1: no balance goes above it, so every balance is exact in JSON. */
export const BALANCE_MAX = Number.MAX_SAFE_INTEGER;
export const METADATA_KEYS_MAX = 50;
export const METADATA_KEY_LENGTH_MAX = 40;
export const METADATA_VALUE_LENGTH_MAX = 500;
export const DESCRIPTION_LENGTH_MAX = 1000;
