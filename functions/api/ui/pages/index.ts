// The listing's pages, one module each; the pieces they share in common.tsx.
export {
  ColumnHeads,
  Layout,
  modelHref,
  type ProblemView,
  type ProjectRef,
  projectHref,
  type SessionState,
  toolHref,
  type Viewer,
} from "./common";
export { ErrorPage, SignInPage } from "./errors";
export { ModelPage, type ModelView } from "./model";
export { PickerPage, type TenantProjectsView } from "./picker";
export {
  COLLAPSED_PACK_SIZE,
  type ListingItem,
  type PackGroup,
  ProjectPage,
  type RoleUsage,
  type ToolRow,
} from "./project";
export { type LayerView, ToolPage, type ToolTarget } from "./tool";
