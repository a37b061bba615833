import { ID_PATTERN, ID_RULE } from "./id";
import { ruleSchema } from "./rule-schema";

/** A label, as tools carry it and `@label` selects it: spelled like an id. */
export const LabelSchema = ruleSchema("label", (label) => (ID_PATTERN.test(label) ? null : ID_RULE));
