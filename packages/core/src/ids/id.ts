/** Tenant and project ids: lowercase, digits, `_` and `-`, at most 63 characters. */
export const ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/** The rule {@link ID_PATTERN} states, as refusals say it. */
export const ID_RULE =
  "lowercase letters, digits, '_' and '-', starting with a letter or digit, at most 63 characters";
