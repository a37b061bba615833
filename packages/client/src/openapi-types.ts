// Generated from /openapi.json by `npm run openapi:types`; do not edit. test/openapi.test.ts fails when stale.

export interface paths {
    "/.well-known/oauth-authorization-server": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Metadata of the development issuer (RFC 8414; only while the service's own tokens are on): its endpoints answer how to get a token */
        get: operations["getWellKnownOauthAuthorizationServer"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/.well-known/oauth-protected-resource": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** OAuth protected-resource metadata of the API (RFC 9728): who issues its tokens, which scopes */
        get: operations["getWellKnownOauthProtectedResource"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/.well-known/oauth-protected-resource/v1/tenants/{tenant}/projects/{project}/mcp": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Protected-resource metadata of the T/mcp endpoint (RFC 9728 §3.1): its resource and the scopes for its tenant */
        get: operations["getWellKnownOauthProtectedResourceV1TenantsByTenantProjectsByProjectMcp"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/.well-known/oauth-protected-resource/v1/tenants/{tenant}/projects/{project}/processes/{id}/mcp": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Protected-resource metadata of a process's MCP endpoint (RFC 9728 §3.1) */
        get: operations["getWellKnownOauthProtectedResourceV1TenantsByTenantProjectsByProjectProcessesByIdMcp"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/docs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The routes as an HTML page in the tool listing's style (no external assets; linked from /ui/) */
        get: operations["getDocs"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** This document, generated from the routes' valibot schemas */
        get: operations["getOpenapiJson"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/health": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Liveness and version */
        get: operations["getV1Health"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** This instance's cache hits, misses and sizes, its generation reads and its script pool (a platform token) */
        get: operations["getV1Metrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/models": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The compiled model catalog: providers with wireType, maxTools, baseUrl and their models */
        get: operations["getV1Models"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/models/{instance}/{file}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /** Create or replace a catalog document (platform admin); validated, stored, and the compiled catalog rebuilt before the answer */
        put: operations["putV1ModelsByInstanceByFile"];
        post?: never;
        /** Delete a stored catalog document (platform admin); a bundled one at the same path applies again */
        delete: operations["deleteV1ModelsByInstanceByFile"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/models/budget": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** maxTools for a model chain: the minimum over the chain of catalog and observed limits (any valid token; a tenant token includes that tenant's own observations) */
        get: operations["getV1ModelsBudget"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/models/observed-limits": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The learned tool limits (admin): a platform admin sees every scope's, a tenant's admin its tenant's own */
        get: operations["getV1ModelsObservedLimits"];
        put?: never;
        /** Learn an endpoint's tool limit from a provider's rejection text: a platform admin's binds every tenant, a tenant's read token binds that tenant's processes */
        post: operations["postV1ModelsObservedLimits"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/models/observed-limits/{scope}/{instance}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Withdraw a learned limit (admin): scope `*` takes a platform admin, a tenant's scope that tenant's admin or a platform admin */
        delete: operations["deleteV1ModelsObservedLimitsByScopeByInstance"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/projects": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The tenant's projects that hold documents, sorted, and whether its tenant layer holds any (read; the web listing's picker) */
        get: operations["getV1TenantsByTenantProjects"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/projects/{project}/diagnostics/empty-response": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Diagnose an empty model response (spec §13.2): which tool outside the tools array the conversation points at; fires once per requestId */
        post: operations["postV1TenantsByTenantProjectsByProjectDiagnosticsEmptyResponse"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/projects/{project}/documents": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The documents of this layer alone (not the cascade), with their ETags (`vance-tools pull`) */
        get: operations["listLayerDocuments"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/projects/{project}/documents/{path}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A document resolved through the cascade, as stored (`ETag`, `X-Vance-Layer` and audit headers) */
        get: operations["getV1TenantsByTenantProjectsByProjectDocuments"];
        /** Create or replace a document of this layer; server-tools/ paths are validated as tools */
        put: operations["putV1TenantsByTenantProjectsByProjectDocuments"];
        post?: never;
        /** Delete a document of this layer (`If-Match` honoured) */
        delete: operations["deleteV1TenantsByTenantProjectsByProjectDocuments"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/projects/{project}/insights/tool-usage": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Tool usage per role: calls, tool_description look-ups, last use */
        get: operations["getV1TenantsByTenantProjectsByProjectInsightsToolUsage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/projects/{project}/mcp": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** MCP for clients that cannot spawn: initialize spawns a process from the query and answers its id as Mcp-Session-Id, which later requests carry */
        post: operations["postV1TenantsByTenantProjectsByProjectMcp"];
        /** Ends the MCP session named by Mcp-Session-Id (the process record stays) */
        delete: operations["deleteV1TenantsByTenantProjectsByProjectMcp"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/projects/{project}/processes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Spawn a process: resolves the recipe once and freezes the allow set */
        post: operations["postV1TenantsByTenantProjectsByProjectProcesses"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/projects/{project}/processes/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The process record, activated tools included */
        get: operations["getV1TenantsByTenantProjectsByProjectProcessesById"];
        put?: never;
        post?: never;
        /** End a process: its record is deleted and its place among the tenant's live processes given back (`VANCE_QUOTA_LIVE_PROCESSES`) */
        delete: operations["deleteV1TenantsByTenantProjectsByProjectProcessesById"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/projects/{project}/processes/{id}/invoke": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Invoke inside the process (allow set, activation, usage); the meta-tools too */
        post: operations["postV1TenantsByTenantProjectsByProjectProcessesByIdInvoke"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/projects/{project}/processes/{id}/manifest": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** This turn's tools (sorted), buckets, budget and discovery blocks */
        get: operations["getV1TenantsByTenantProjectsByProjectProcessesByIdManifest"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/projects/{project}/processes/{id}/mcp": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** MCP (Streamable HTTP, stateless) over the process's tools: tools/list is the manifest, tools/call its invoke; GET answers 405 (no standalone stream) */
        post: operations["postV1TenantsByTenantProjectsByProjectProcessesByIdMcp"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/projects/{project}/recipes/resolve": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** (engineDefault ∪ allowedToolsAdd) ∖ allowedToolsRemove, each @label expanded */
        post: operations["postV1TenantsByTenantProjectsByProjectRecipesResolve"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/projects/{project}/tools": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The merged cascade (built-in → bundled → tenant → project), disabled removed, sorted by name; with the tool documents it cannot offer and the packs whose source is not current */
        get: operations["getV1TenantsByTenantProjectsByProjectTools"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/projects/{project}/tools/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** First hit of project → tenant → bundled → built-in (pack sub-tools too) */
        get: operations["getV1TenantsByTenantProjectsByProjectToolsByName"];
        /** Create or replace the tool document of this layer (the YAML is stored as sent) */
        put: operations["putV1TenantsByTenantProjectsByProjectToolsByName"];
        post?: never;
        /** Delete the tool document of this layer (`If-Match` honoured) */
        delete: operations["deleteV1TenantsByTenantProjectsByProjectToolsByName"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/projects/{project}/tools/{name}/invoke": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Invoke a tool: its value, or its own failure as data */
        post: operations["postV1TenantsByTenantProjectsByProjectToolsByNameInvoke"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/secrets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The tenant's secrets: names and write times, never values (admin) */
        get: operations["getV1TenantsByTenantSecrets"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{tenant}/secrets/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /** Create or replace a secret for ${secret:NAME} in this tenant's documents (admin; value at most 8 KiB) */
        put: operations["putV1TenantsByTenantSecretsByName"];
        post?: never;
        /** Delete a secret (admin) */
        delete: operations["deleteV1TenantsByTenantSecretsByName"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/types": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Tool types with their parameters JSON Schema (any valid token) */
        get: operations["getV1Types"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/types/{typeId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One tool type with its parameters JSON Schema (any valid token) */
        get: operations["getV1TypesByTypeId"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** @description a relative path such as documents/guide.md: plain names joined by '/', no '..' */
        DocumentPath: string;
        /** @description a tool name or a prefix pattern such as doc_* */
        HintEntry: string | (string);
        /** @description a tool name, or a pack sub-tool named pack__op */
        InvocableToolName: string;
        Label: string;
        /** @description instance/slug */
        ModelId: string;
        Problem: {
            code: string;
            detail: string;
            errors?: {
                line?: number;
                message: string;
                path: string;
            }[];
            requestId?: string;
            status: number;
            title: string;
            type: string;
        };
        /** @description a project id, or `_tenant` for the tenant layer */
        ProjectId: string | "_tenant";
        /** @description a tool name (pack sub-tools included) or an @label selector */
        RecipeEntry: string | (string);
        /** @description pack__op */
        SubToolName: string;
        TenantId: string;
        /** @description a configured tool's name; `__` is reserved for pack sub-tools */
        ToolName: string;
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    getWellKnownOauthAuthorizationServer: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The metadata */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        authorization_endpoint: string;
                        code_challenge_methods_supported: string[];
                        grant_types_supported: string[];
                        issuer: string;
                        registration_endpoint: string;
                        response_types_supported: string[];
                        service_documentation: string;
                        token_endpoint: string;
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
        };
    };
    getWellKnownOauthProtectedResource: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The metadata */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        authorization_servers: string[];
                        bearer_methods_supported: string[];
                        resource: string;
                        resource_documentation: string;
                        resource_name: string;
                        scopes_supported?: string[];
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
        };
    };
    getWellKnownOauthProtectedResourceV1TenantsByTenantProjectsByProjectMcp: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                project: components["schemas"]["ProjectId"];
                tenant: components["schemas"]["TenantId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The metadata */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        authorization_servers: string[];
                        bearer_methods_supported: string[];
                        resource: string;
                        resource_documentation: string;
                        resource_name: string;
                        scopes_supported?: string[];
                    };
                };
            };
            /** @description invalid_id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "invalid_id";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
        };
    };
    getWellKnownOauthProtectedResourceV1TenantsByTenantProjectsByProjectProcessesByIdMcp: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
                project: components["schemas"]["ProjectId"];
                tenant: components["schemas"]["TenantId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The metadata */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        authorization_servers: string[];
                        bearer_methods_supported: string[];
                        resource: string;
                        resource_documentation: string;
                        resource_name: string;
                        scopes_supported?: string[];
                    };
                };
            };
            /** @description invalid_id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "invalid_id";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
        };
    };
    getDocs: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description HTML */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
        };
    };
    getOpenapiJson: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OpenAPI 3.1 */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": string;
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
        };
    };
    getV1Health: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        status: "ok";
                        version: string;
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
        };
    };
    getV1Metrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Counters since the instance started */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        caches: {
                            bytes?: number;
                            entries?: number;
                            hits: number;
                            maxBytes?: number;
                            maxEntries?: number;
                            misses: number;
                            name: string;
                            thrashes?: number;
                        }[];
                        generations: {
                            bumps: number;
                            reads: number;
                            sharedReads: number;
                        };
                        identity: {
                            issuers: {
                                failures: number;
                                issuer: string;
                                keys: number;
                                reads: number;
                            }[];
                            verifiedTokens: number;
                        };
                        packs: {
                            current: number;
                            invalid: number;
                            stale: number;
                            unavailable: number;
                        };
                        schemaCompiles: {
                            servingThread: number;
                            servingThreadLarge: number;
                            worker: number;
                        };
                        scripts: {
                            busy: number;
                            queued: number;
                            rateLimited: number;
                            runs: number;
                            workers: {
                                busy: number;
                                idle: number;
                                retired: number;
                                started: number;
                                starting: number;
                                terminated: number;
                            };
                        } | null;
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "forbidden";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
    getV1Models: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The catalog */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        providers: {
                            baseUrl?: string;
                            instance: string;
                            maxTools: number | null;
                            maxToolTokens?: number;
                            models: {
                                maxTools?: number;
                                maxToolTokens?: number;
                                /** @enum {string} */
                                size?: "small" | "medium" | "large";
                                slug: string;
                            }[];
                            wireType: string | null;
                        }[];
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "forbidden";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
    putV1ModelsByInstanceByFile: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description `_provider` (the instance's defaults) or a model slug */
                file: string;
                /** @description the catalog instance (the endpoint), e.g. openai, cortecs */
                instance: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    apiKey?: string;
                    baseUrl?: string;
                    maxTools?: number;
                    maxToolTokens?: number;
                    wireType?: string;
                } | {
                    maxTools?: number;
                    maxToolTokens?: number;
                    /** @enum {string} */
                    size?: "small" | "medium" | "large";
                };
                "application/yaml": {
                    apiKey?: string;
                    baseUrl?: string;
                    maxTools?: number;
                    maxToolTokens?: number;
                    wireType?: string;
                } | {
                    maxTools?: number;
                    maxToolTokens?: number;
                    /** @enum {string} */
                    size?: "small" | "medium" | "large";
                };
            };
        };
        responses: {
            /** @description Replaced; the instance as the rebuilt catalog shows it */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        path: string;
                        provider: {
                            baseUrl?: string;
                            instance: string;
                            maxTools: number | null;
                            maxToolTokens?: number;
                            models: {
                                maxTools?: number;
                                maxToolTokens?: number;
                                /** @enum {string} */
                                size?: "small" | "medium" | "large";
                                slug: string;
                            }[];
                            wireType: string | null;
                        };
                    };
                };
            };
            /** @description Created; the instance as the rebuilt catalog shows it */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        path: string;
                        provider: {
                            baseUrl?: string;
                            instance: string;
                            maxTools: number | null;
                            maxToolTokens?: number;
                            models: {
                                maxTools?: number;
                                maxToolTokens?: number;
                                /** @enum {string} */
                                size?: "small" | "medium" | "large";
                                slug: string;
                            }[];
                            wireType: string | null;
                        };
                    };
                };
            };
            /** @description invalid_id | invalid_body | invalid_json */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "invalid_id" | "invalid_body" | "invalid_json";
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "forbidden";
                    };
                };
            };
            /** @description payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "payload_too_large";
                    };
                };
            };
            /** @description unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unsupported_media_type";
                    };
                };
            };
            /** @description validation_failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "validation_failed";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
    deleteV1ModelsByInstanceByFile: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description `_provider` (the instance's defaults) or a model slug */
                file: string;
                /** @description the catalog instance (the endpoint), e.g. openai, cortecs */
                instance: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted; the compiled catalog is rebuilt */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description invalid_id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "invalid_id";
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "forbidden";
                    };
                };
            };
            /** @description document_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "document_not_found";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
    getV1ModelsBudget: {
        parameters: {
            query: {
                /** @description comma-separated model ids, instance/slug */
                chain: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The chain's budget */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        maxTools: number | null;
                        maxToolTokens?: number;
                        models: {
                            maxTools: number | null;
                            maxToolTokens?: number;
                            model: string;
                            /** @enum {string} */
                            source: "model" | "provider" | "observed" | "none";
                        }[];
                    };
                };
            };
            /** @description invalid_model */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "invalid_model";
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "forbidden";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
    getV1ModelsObservedLimits: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The learned limits, by scope and endpoint */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        limits: {
                            /** @description the catalog endpoint the limit binds */
                            instance: string;
                            maxTools: number;
                            /** @description the model whose rejection taught it */
                            model: string;
                            /** @description ISO-8601 */
                            observedAt: string;
                            /** @description `*` (binds every tenant) or the reporting tenant */
                            scope: string;
                        }[];
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "forbidden";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
    postV1ModelsObservedLimits: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    error: string;
                    model: string;
                };
            };
        };
        responses: {
            /** @description The limit learned */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        maxTools: number;
                        model: string;
                    };
                };
            };
            /** @description invalid_model | invalid_json */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "invalid_model" | "invalid_json";
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "forbidden";
                    };
                };
            };
            /** @description payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "payload_too_large";
                    };
                };
            };
            /** @description unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unsupported_media_type";
                    };
                };
            };
            /** @description no_limit_in_error | budget_floor_exceeded | validation_failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "no_limit_in_error" | "budget_floor_exceeded" | "validation_failed";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
    deleteV1ModelsObservedLimitsByScopeByInstance: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the catalog instance (the endpoint) */
                instance: string;
                /** @description `*` (the platform's limit) or a tenant id */
                scope: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Withdrawn; every instance stops applying it */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description invalid_id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "invalid_id";
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "forbidden";
                    };
                };
            };
            /** @description not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "not_found";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
    getV1TenantsByTenantProjects: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant: components["schemas"]["TenantId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The projects */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        projects: string[];
                        tenant: string;
                        tenantLayer: boolean;
                        truncated: boolean;
                    };
                };
            };
            /** @description invalid_id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "invalid_id";
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "forbidden";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
    postV1TenantsByTenantProjectsByProjectDiagnosticsEmptyResponse: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                project: components["schemas"]["ProjectId"];
                tenant: components["schemas"]["TenantId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    finishReason?: string | null;
                    messages: {
                        content?: (string | unknown[]) | null;
                        role: string;
                    }[];
                    offeredTools: string[];
                    requestId: string;
                };
            };
        };
        responses: {
            /** @description The finding */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        candidates: {
                            name: string;
                            /** @enum {string} */
                            origin: "prompt" | "user" | "context";
                        }[];
                        firstReport: boolean;
                        /** @enum {string} */
                        kind: "phantom" | "blank" | "skipped";
                    };
                };
            };
            /** @description invalid_json | invalid_id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "invalid_json" | "invalid_id";
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "forbidden";
                    };
                };
            };
            /** @description payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "payload_too_large";
                    };
                };
            };
            /** @description unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unsupported_media_type";
                    };
                };
            };
            /** @description validation_failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "validation_failed";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
    listLayerDocuments: {
        parameters: {
            query?: {
                /** @description only paths starting with this folder, e.g. server-tools/ */
                prefix?: string;
            };
            header?: never;
            path: {
                project: components["schemas"]["ProjectId"];
                tenant: components["schemas"]["TenantId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The layer's documents, sorted by path */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        documents: {
                            etag: string;
                            path: string;
                            size: number;
                        }[];
                        /** @enum {string} */
                        layer: "project" | "tenant";
                    };
                };
            };
            /** @description invalid_id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "invalid_id";
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "forbidden";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
    getV1TenantsByTenantProjectsByProjectDocuments: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                path: components["schemas"]["DocumentPath"];
                project: components["schemas"]["ProjectId"];
                tenant: components["schemas"]["TenantId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The stored bytes, with their content type */
            200: {
                headers: {
                    /** @description When the document was created (ISO-8601); absent where unknown */
                    "X-Vance-Created-At"?: string;
                    /** @description The creating token's subject, percent-encoded (kept across updates); absent where unknown */
                    "X-Vance-Created-By"?: string;
                    /** @description The layer that answered */
                    "X-Vance-Layer"?: string;
                    /** @description When it was last written (ISO-8601); absent for bundled documents */
                    "X-Vance-Updated-At"?: string;
                    /** @description The last writer's token subject, percent-encoded; absent where unknown */
                    "X-Vance-Updated-By"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "*/*": string;
                };
            };
            /** @description invalid_id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "invalid_id";
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "forbidden";
                    };
                };
            };
            /** @description document_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "document_not_found";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
    putV1TenantsByTenantProjectsByProjectDocuments: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                path: components["schemas"]["DocumentPath"];
                project: components["schemas"]["ProjectId"];
                tenant: components["schemas"]["TenantId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/javascript": string;
                "application/json": string;
                "application/yaml": string;
                "text/*": string;
            };
        };
        responses: {
            /** @description Replaced; a tool document answers as `GET T/tools/{name}` */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        createdAt: string | null;
                        createdBy: string | null;
                        etag: string;
                        /** @enum {string} */
                        layer: "project" | "tenant";
                        path: string;
                        updatedAt: string | null;
                        updatedBy: string | null;
                    } | {
                        config: {
                            /** @default false */
                            defaultDeferred: boolean;
                            description: string;
                            /** @default [] */
                            disabledSubTools: string[];
                            /** @default true */
                            enabled: boolean;
                            /** @default [] */
                            labels: components["schemas"]["Label"][];
                            name?: components["schemas"]["ToolName"];
                            /** @default {} */
                            parameters: {
                                [key: string]: unknown;
                            } | null;
                            /** @default false */
                            primary: boolean;
                            type: string;
                        };
                        createdAt: string | null;
                        createdBy: string | null;
                        etag: string | null;
                        inputSchema: {
                            [key: string]: unknown;
                        };
                        /** @enum {string} */
                        layer: "project" | "tenant" | "bundled" | "builtin";
                        name: string;
                        pack?: {
                            name: string;
                            sourceName: string;
                        };
                        source?: {
                            /** @enum {string} */
                            layer: "project" | "tenant" | "bundled" | "builtin";
                            leftOut: string[];
                            pack: string;
                            reason?: string;
                            /** @enum {string} */
                            status: "current" | "stale" | "unavailable";
                            subTools: number;
                        };
                        /** @constant */
                        stale?: true;
                        updatedAt: string | null;
                        updatedBy: string | null;
                    };
                };
            };
            /** @description Created; a tool document answers as `GET T/tools/{name}` */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        createdAt: string | null;
                        createdBy: string | null;
                        etag: string;
                        /** @enum {string} */
                        layer: "project" | "tenant";
                        path: string;
                        updatedAt: string | null;
                        updatedBy: string | null;
                    } | {
                        config: {
                            /** @default false */
                            defaultDeferred: boolean;
                            description: string;
                            /** @default [] */
                            disabledSubTools: string[];
                            /** @default true */
                            enabled: boolean;
                            /** @default [] */
                            labels: components["schemas"]["Label"][];
                            name?: components["schemas"]["ToolName"];
                            /** @default {} */
                            parameters: {
                                [key: string]: unknown;
                            } | null;
                            /** @default false */
                            primary: boolean;
                            type: string;
                        };
                        createdAt: string | null;
                        createdBy: string | null;
                        etag: string | null;
                        inputSchema: {
                            [key: string]: unknown;
                        };
                        /** @enum {string} */
                        layer: "project" | "tenant" | "bundled" | "builtin";
                        name: string;
                        pack?: {
                            name: string;
                            sourceName: string;
                        };
                        source?: {
                            /** @enum {string} */
                            layer: "project" | "tenant" | "bundled" | "builtin";
                            leftOut: string[];
                            pack: string;
                            reason?: string;
                            /** @enum {string} */
                            status: "current" | "stale" | "unavailable";
                            subTools: number;
                        };
                        /** @constant */
                        stale?: true;
                        updatedAt: string | null;
                        updatedBy: string | null;
                    };
                };
            };
            /** @description invalid_precondition | invalid_body | invalid_json | invalid_id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "invalid_precondition" | "invalid_body" | "invalid_json" | "invalid_id";
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "forbidden";
                    };
                };
            };
            /** @description path_conflict */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "path_conflict";
                    };
                };
            };
            /** @description precondition_failed */
            412: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "precondition_failed";
                    };
                };
            };
            /** @description payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "payload_too_large";
                    };
                };
            };
            /** @description unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unsupported_media_type";
                    };
                };
            };
            /** @description validation_failed | name_mismatch | unknown_type | reserved_name */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "validation_failed" | "name_mismatch" | "unknown_type" | "reserved_name";
                    };
                };
            };
            /** @description quota_exceeded */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "quota_exceeded";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
    deleteV1TenantsByTenantProjectsByProjectDocuments: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                path: components["schemas"]["DocumentPath"];
                project: components["schemas"]["ProjectId"];
                tenant: components["schemas"]["TenantId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description invalid_id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "invalid_id";
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "forbidden";
                    };
                };
            };
            /** @description document_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "document_not_found";
                    };
                };
            };
            /** @description precondition_failed */
            412: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "precondition_failed";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
    getV1TenantsByTenantProjectsByProjectInsightsToolUsage: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                project: components["schemas"]["ProjectId"];
                tenant: components["schemas"]["TenantId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Usage per role */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        roles: {
                            role: string;
                            tools: {
                                calls: number;
                                discoveryHits: number;
                                lastUsedAt: string;
                                name: string;
                            }[];
                        }[];
                    };
                };
            };
            /** @description invalid_id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "invalid_id";
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "forbidden";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
    postV1TenantsByTenantProjectsByProjectMcp: {
        parameters: {
            query?: {
                /** @description allowedToolsAdd at initialize: comma-separated tool names and @labels */
                add?: string;
                /** @description allowedToolsDefer at initialize: comma-separated names and name* prefixes */
                defer?: string;
                /** @description the engine, at initialize */
                engine?: string;
                /** @description the model chain at initialize: comma-separated instance/slug */
                models?: string;
                /** @description the recipe (the process's role), at initialize */
                recipe?: string;
                /** @description allowedToolsRemove at initialize: comma-separated tool names and @labels */
                remove?: string;
            };
            header?: never;
            path: {
                project: components["schemas"]["ProjectId"];
                tenant: components["schemas"]["TenantId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    id?: string | number;
                    /** @constant */
                    jsonrpc: "2.0";
                    method?: string;
                    params?: {
                        [key: string]: unknown;
                    };
                };
            };
        };
        responses: {
            /** @description The JSON-RPC answer; a tools/call of tool_description or invoke_tool answers text/event-stream: notifications/tools/list_changed, then the result */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, never>;
                    "text/event-stream": string;
                };
            };
            /** @description Accepted: the body held only notifications or responses */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description session_required | invalid_json | invalid_id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "session_required" | "invalid_json" | "invalid_id";
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description origin_not_allowed | host_not_allowed | forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "origin_not_allowed" | "host_not_allowed" | "forbidden";
                    };
                };
            };
            /** @description session_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "session_not_found";
                    };
                };
            };
            /** @description payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "payload_too_large";
                    };
                };
            };
            /** @description unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unsupported_media_type";
                    };
                };
            };
            /** @description validation_failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "validation_failed";
                    };
                };
            };
            /** @description quota_exceeded */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "quota_exceeded";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
    deleteV1TenantsByTenantProjectsByProjectMcp: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                project: components["schemas"]["ProjectId"];
                tenant: components["schemas"]["TenantId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ended; later requests of the session answer 404 */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description session_required | invalid_id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "session_required" | "invalid_id";
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description origin_not_allowed | host_not_allowed | forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "origin_not_allowed" | "host_not_allowed" | "forbidden";
                    };
                };
            };
            /** @description session_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "session_not_found";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
    postV1TenantsByTenantProjectsByProjectProcesses: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                project: components["schemas"]["ProjectId"];
                tenant: components["schemas"]["TenantId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @default [] */
                    allowedToolsAdd?: components["schemas"]["RecipeEntry"][];
                    /** @default [] */
                    allowedToolsDefer?: components["schemas"]["HintEntry"][];
                    /** @default [] */
                    allowedToolsDropFirst?: components["schemas"]["HintEntry"][];
                    /** @default [] */
                    allowedToolsKeep?: components["schemas"]["HintEntry"][];
                    /** @default [] */
                    allowedToolsRemove?: components["schemas"]["RecipeEntry"][];
                    /** @default [] */
                    clientTools?: {
                        description: string;
                        inputSchema: {
                            [key: string]: unknown;
                        };
                        name: components["schemas"]["InvocableToolName"];
                        packHint?: string;
                    }[];
                    engine?: string;
                    /** @default [] */
                    engineDefault?: components["schemas"]["RecipeEntry"][];
                    models: components["schemas"]["ModelId"][];
                    recipe?: string;
                };
            };
        };
        responses: {
            /** @description The process and its frozen allow set, with the packs whose source is not current and the entries that named nothing */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        allowedPacks: string[];
                        allowedTools: string[];
                        excludedTools: string[];
                        processId: string;
                        stalePacks: {
                            pack: string;
                            reason: string;
                            /** @enum {string} */
                            status: "stale" | "unavailable";
                        }[];
                        warnings: {
                            /** @enum {string} */
                            code: "unknown_tool" | "invalid_tool" | "unknown_label" | "not_allowed" | "matches_nothing" | "unknown_model_instance" | "tool_search_added";
                            entry: string;
                            list: string;
                            message: string;
                        }[];
                    };
                };
            };
            /** @description invalid_json | invalid_id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "invalid_json" | "invalid_id";
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "forbidden";
                    };
                };
            };
            /** @description payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "payload_too_large";
                    };
                };
            };
            /** @description unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unsupported_media_type";
                    };
                };
            };
            /** @description budget_floor_exceeded | validation_failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "budget_floor_exceeded" | "validation_failed";
                    };
                };
            };
            /** @description busy | rate_limited | quota_exceeded */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "busy" | "rate_limited" | "quota_exceeded";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
    getV1TenantsByTenantProjectsByProjectProcessesById: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the `processId` a spawn answered */
                id: string;
                project: components["schemas"]["ProjectId"];
                tenant: components["schemas"]["TenantId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The record */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        activatedTools: {
                            [key: string]: number;
                        };
                        allowedPacks: string[];
                        allowedTools: string[];
                        allowedToolsAdd: string[];
                        allowedToolsDefer: string[];
                        allowedToolsDropFirst: string[];
                        allowedToolsKeep: string[];
                        clientTools: {
                            description: string;
                            inputSchema: {
                                [key: string]: unknown;
                            };
                            name: string;
                            packHint?: string;
                        }[];
                        createdAt: string;
                        engine: string | null;
                        excludedTools: string[];
                        expiresAt?: number;
                        models: string[];
                        processId: string;
                        project: string;
                        recipe: string | null;
                        role: string;
                        tenant: string;
                    };
                };
            };
            /** @description invalid_id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "invalid_id";
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "forbidden";
                    };
                };
            };
            /** @description process_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "process_not_found";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
    deleteV1TenantsByTenantProjectsByProjectProcessesById: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description the `processId` a spawn answered */
                id: string;
                project: components["schemas"]["ProjectId"];
                tenant: components["schemas"]["TenantId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ended; later requests of the process answer 404 */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description invalid_id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "invalid_id";
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "forbidden";
                    };
                };
            };
            /** @description process_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "process_not_found";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
    postV1TenantsByTenantProjectsByProjectProcessesByIdInvoke: {
        parameters: {
            query?: {
                /** @description the turn's skill tools, as its manifest got them (?with=): the meta-tools then list them in context */
                with?: string;
            };
            header?: never;
            path: {
                /** @description the `processId` a spawn answered */
                id: string;
                project: components["schemas"]["ProjectId"];
                tenant: components["schemas"]["TenantId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    name: components["schemas"]["InvocableToolName"];
                    /** @default {} */
                    params?: unknown;
                };
            };
        };
        responses: {
            /** @description The tool's outcome */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        durationMs: number;
                        value: unknown;
                    } | {
                        durationMs: number;
                        error: string;
                        message: string;
                        skipped?: string[];
                        status?: number;
                        unknown?: string[];
                    } | {
                        durationMs: number;
                        name: string;
                        params: unknown;
                        /** @constant */
                        route: "client";
                    };
                };
            };
            /** @description invalid_json | invalid_id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "invalid_json" | "invalid_id";
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description tool_not_allowed | forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "tool_not_allowed" | "forbidden";
                    };
                };
            };
            /** @description process_not_found | tool_not_found | tool_disabled */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "process_not_found" | "tool_not_found" | "tool_disabled";
                    };
                };
            };
            /** @description payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "payload_too_large";
                    };
                };
            };
            /** @description unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unsupported_media_type";
                    };
                };
            };
            /** @description invalid_params | validation_failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "invalid_params" | "validation_failed";
                    };
                };
            };
            /** @description busy | rate_limited */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "busy" | "rate_limited";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
    getV1TenantsByTenantProjectsByProjectProcessesByIdManifest: {
        parameters: {
            query?: {
                /** @description the tools' wire format */
                format?: "openai" | "anthropic";
                /** @description the `namesVersion` of an earlier answer for this process: when `deferred` and `demoted` are still those lists, they are left out of the answer */
                names?: string;
                /** @description comma-separated skill tools added after classification (ranked keep), each in the allow set */
                with?: string;
            };
            header?: never;
            path: {
                /** @description the `processId` a spawn answered */
                id: string;
                project: components["schemas"]["ProjectId"];
                tenant: components["schemas"]["TenantId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The manifest */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        budget: {
                            limit: number | null;
                            maxTools: number | null;
                            maxToolTokens?: number;
                            reserve: number;
                        };
                        /** @description left out when `?names=` is this answer's `namesVersion` */
                        deferred?: string[];
                        /** @description left out when `?names=` is this answer's `namesVersion` */
                        demoted?: string[];
                        demotedDiscoveryBlock: string;
                        discoveryBlock: string;
                        /** @description the version of `deferred` and `demoted` (equal lists, equal versions): sent back as `?names=`, the answer leaves them out while they are the same */
                        namesVersion: string;
                        primary: string[];
                        stalePacks: {
                            pack: string;
                            reason: string;
                            /** @enum {string} */
                            status: "stale" | "unavailable";
                        }[];
                        tools: {
                            function: {
                                description: string;
                                name: string;
                                parameters: {
                                    [key: string]: unknown;
                                };
                            };
                            /** @constant */
                            type: "function";
                        }[] | {
                            description: string;
                            input_schema: {
                                [key: string]: unknown;
                            };
                            name: string;
                        }[];
                    };
                };
            };
            /** @description invalid_format | invalid_id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "invalid_format" | "invalid_id";
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description tool_not_allowed | forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "tool_not_allowed" | "forbidden";
                    };
                };
            };
            /** @description process_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "process_not_found";
                    };
                };
            };
            /** @description budget_floor_exceeded */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "budget_floor_exceeded";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
    postV1TenantsByTenantProjectsByProjectProcessesByIdMcp: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
                project: components["schemas"]["ProjectId"];
                tenant: components["schemas"]["TenantId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    id?: string | number;
                    /** @constant */
                    jsonrpc: "2.0";
                    method?: string;
                    params?: {
                        [key: string]: unknown;
                    };
                };
            };
        };
        responses: {
            /** @description The JSON-RPC answer; a tools/call of tool_description or invoke_tool answers text/event-stream: notifications/tools/list_changed, then the result */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, never>;
                    "text/event-stream": string;
                };
            };
            /** @description Accepted: the body held only notifications or responses */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description invalid_json | invalid_id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "invalid_json" | "invalid_id";
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description origin_not_allowed | host_not_allowed | forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "origin_not_allowed" | "host_not_allowed" | "forbidden";
                    };
                };
            };
            /** @description process_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "process_not_found";
                    };
                };
            };
            /** @description payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "payload_too_large";
                    };
                };
            };
            /** @description unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unsupported_media_type";
                    };
                };
            };
            /** @description validation_failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "validation_failed";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
    postV1TenantsByTenantProjectsByProjectRecipesResolve: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                project: components["schemas"]["ProjectId"];
                tenant: components["schemas"]["TenantId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @default [] */
                    allowedToolsAdd?: components["schemas"]["RecipeEntry"][];
                    /** @default [] */
                    allowedToolsRemove?: components["schemas"]["RecipeEntry"][];
                    /** @default [] */
                    engineDefault?: components["schemas"]["RecipeEntry"][];
                };
            };
        };
        responses: {
            /** @description The allow set, sorted: names and packs by reference, with the packs whose source is not current and the entries that named nothing */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        allowedPacks: string[];
                        allowedTools: string[];
                        excludedTools: string[];
                        stalePacks: {
                            pack: string;
                            reason: string;
                            /** @enum {string} */
                            status: "stale" | "unavailable";
                        }[];
                        warnings: {
                            /** @enum {string} */
                            code: "unknown_tool" | "invalid_tool" | "unknown_label" | "not_allowed" | "matches_nothing" | "unknown_model_instance" | "tool_search_added";
                            entry: string;
                            list: string;
                            message: string;
                        }[];
                    };
                };
            };
            /** @description invalid_json | invalid_id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "invalid_json" | "invalid_id";
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "forbidden";
                    };
                };
            };
            /** @description payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "payload_too_large";
                    };
                };
            };
            /** @description unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unsupported_media_type";
                    };
                };
            };
            /** @description validation_failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "validation_failed";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
    getV1TenantsByTenantProjectsByProjectTools: {
        parameters: {
            query?: {
                /** @description only tools carrying this label */
                label?: components["schemas"]["Label"];
            };
            header?: never;
            path: {
                project: components["schemas"]["ProjectId"];
                tenant: components["schemas"]["TenantId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The tools */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        invalid: {
                            errors: {
                                line?: number;
                                message: string;
                                path: string;
                            }[];
                            /** @enum {string} */
                            layer: "project" | "tenant" | "bundled";
                            message: string;
                            path: string;
                        }[];
                        packs: {
                            /** @enum {string} */
                            layer: "project" | "tenant" | "bundled" | "builtin";
                            leftOut: string[];
                            pack: string;
                            reason?: string;
                            /** @enum {string} */
                            status: "current" | "stale" | "unavailable";
                            subTools: number;
                        }[];
                        stalePacks: {
                            pack: string;
                            reason: string;
                            /** @enum {string} */
                            status: "stale" | "unavailable";
                        }[];
                        tools: {
                            createdAt: string | null;
                            createdBy: string | null;
                            description: string;
                            enabled: boolean;
                            family?: string;
                            labels: string[];
                            /** @enum {string} */
                            layer: "project" | "tenant" | "bundled" | "builtin";
                            name: string;
                            pack?: string;
                            primary: boolean;
                            /** @constant */
                            stale?: true;
                            type: string;
                            updatedAt: string | null;
                            updatedBy: string | null;
                        }[];
                    };
                };
            };
            /** @description invalid_id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "invalid_id";
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "forbidden";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
    getV1TenantsByTenantProjectsByProjectToolsByName: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                name: components["schemas"]["InvocableToolName"];
                project: components["schemas"]["ProjectId"];
                tenant: components["schemas"]["TenantId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The tool; `ETag` header for tenant and project documents */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        config: {
                            /** @default false */
                            defaultDeferred: boolean;
                            description: string;
                            /** @default [] */
                            disabledSubTools: string[];
                            /** @default true */
                            enabled: boolean;
                            /** @default [] */
                            labels: components["schemas"]["Label"][];
                            name?: components["schemas"]["ToolName"];
                            /** @default {} */
                            parameters: {
                                [key: string]: unknown;
                            } | null;
                            /** @default false */
                            primary: boolean;
                            type: string;
                        };
                        createdAt: string | null;
                        createdBy: string | null;
                        etag: string | null;
                        inputSchema: {
                            [key: string]: unknown;
                        };
                        /** @enum {string} */
                        layer: "project" | "tenant" | "bundled" | "builtin";
                        name: string;
                        pack?: {
                            name: string;
                            sourceName: string;
                        };
                        source?: {
                            /** @enum {string} */
                            layer: "project" | "tenant" | "bundled" | "builtin";
                            leftOut: string[];
                            pack: string;
                            reason?: string;
                            /** @enum {string} */
                            status: "current" | "stale" | "unavailable";
                            subTools: number;
                        };
                        /** @constant */
                        stale?: true;
                        updatedAt: string | null;
                        updatedBy: string | null;
                    };
                };
            };
            /** @description invalid_id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "invalid_id";
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "forbidden";
                    };
                };
            };
            /** @description tool_not_found | tool_disabled */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "tool_not_found" | "tool_disabled";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description source_unavailable */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "source_unavailable";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
    putV1TenantsByTenantProjectsByProjectToolsByName: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                name: components["schemas"]["ToolName"];
                project: components["schemas"]["ProjectId"];
                tenant: components["schemas"]["TenantId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @default false */
                    defaultDeferred?: boolean;
                    description: string;
                    /** @default [] */
                    disabledSubTools?: string[];
                    /** @default true */
                    enabled?: boolean;
                    /** @default [] */
                    labels?: components["schemas"]["Label"][];
                    name?: components["schemas"]["ToolName"];
                    /** @default {} */
                    parameters?: {
                        [key: string]: unknown;
                    } | null;
                    /** @default false */
                    primary?: boolean;
                    type: string;
                };
                "application/yaml": {
                    /** @default false */
                    defaultDeferred?: boolean;
                    description: string;
                    /** @default [] */
                    disabledSubTools?: string[];
                    /** @default true */
                    enabled?: boolean;
                    /** @default [] */
                    labels?: components["schemas"]["Label"][];
                    name?: components["schemas"]["ToolName"];
                    /** @default {} */
                    parameters?: {
                        [key: string]: unknown;
                    } | null;
                    /** @default false */
                    primary?: boolean;
                    type: string;
                };
            };
        };
        responses: {
            /** @description Replaced */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        config: {
                            /** @default false */
                            defaultDeferred: boolean;
                            description: string;
                            /** @default [] */
                            disabledSubTools: string[];
                            /** @default true */
                            enabled: boolean;
                            /** @default [] */
                            labels: components["schemas"]["Label"][];
                            name?: components["schemas"]["ToolName"];
                            /** @default {} */
                            parameters: {
                                [key: string]: unknown;
                            } | null;
                            /** @default false */
                            primary: boolean;
                            type: string;
                        };
                        createdAt: string | null;
                        createdBy: string | null;
                        etag: string | null;
                        inputSchema: {
                            [key: string]: unknown;
                        };
                        /** @enum {string} */
                        layer: "project" | "tenant" | "bundled" | "builtin";
                        name: string;
                        pack?: {
                            name: string;
                            sourceName: string;
                        };
                        source?: {
                            /** @enum {string} */
                            layer: "project" | "tenant" | "bundled" | "builtin";
                            leftOut: string[];
                            pack: string;
                            reason?: string;
                            /** @enum {string} */
                            status: "current" | "stale" | "unavailable";
                            subTools: number;
                        };
                        /** @constant */
                        stale?: true;
                        updatedAt: string | null;
                        updatedBy: string | null;
                    };
                };
            };
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        config: {
                            /** @default false */
                            defaultDeferred: boolean;
                            description: string;
                            /** @default [] */
                            disabledSubTools: string[];
                            /** @default true */
                            enabled: boolean;
                            /** @default [] */
                            labels: components["schemas"]["Label"][];
                            name?: components["schemas"]["ToolName"];
                            /** @default {} */
                            parameters: {
                                [key: string]: unknown;
                            } | null;
                            /** @default false */
                            primary: boolean;
                            type: string;
                        };
                        createdAt: string | null;
                        createdBy: string | null;
                        etag: string | null;
                        inputSchema: {
                            [key: string]: unknown;
                        };
                        /** @enum {string} */
                        layer: "project" | "tenant" | "bundled" | "builtin";
                        name: string;
                        pack?: {
                            name: string;
                            sourceName: string;
                        };
                        source?: {
                            /** @enum {string} */
                            layer: "project" | "tenant" | "bundled" | "builtin";
                            leftOut: string[];
                            pack: string;
                            reason?: string;
                            /** @enum {string} */
                            status: "current" | "stale" | "unavailable";
                            subTools: number;
                        };
                        /** @constant */
                        stale?: true;
                        updatedAt: string | null;
                        updatedBy: string | null;
                    };
                };
            };
            /** @description invalid_precondition | invalid_body | invalid_json | invalid_id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "invalid_precondition" | "invalid_body" | "invalid_json" | "invalid_id";
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "forbidden";
                    };
                };
            };
            /** @description path_conflict */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "path_conflict";
                    };
                };
            };
            /** @description precondition_failed */
            412: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "precondition_failed";
                    };
                };
            };
            /** @description payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "payload_too_large";
                    };
                };
            };
            /** @description unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unsupported_media_type";
                    };
                };
            };
            /** @description validation_failed | name_mismatch | unknown_type | reserved_name */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "validation_failed" | "name_mismatch" | "unknown_type" | "reserved_name";
                    };
                };
            };
            /** @description busy | rate_limited */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "busy" | "rate_limited";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
    deleteV1TenantsByTenantProjectsByProjectToolsByName: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                name: components["schemas"]["ToolName"];
                project: components["schemas"]["ProjectId"];
                tenant: components["schemas"]["TenantId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description invalid_id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "invalid_id";
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "forbidden";
                    };
                };
            };
            /** @description tool_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "tool_not_found";
                    };
                };
            };
            /** @description precondition_failed */
            412: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "precondition_failed";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
    postV1TenantsByTenantProjectsByProjectToolsByNameInvoke: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                name: components["schemas"]["InvocableToolName"];
                project: components["schemas"]["ProjectId"];
                tenant: components["schemas"]["TenantId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    allowedTools?: components["schemas"]["InvocableToolName"][];
                    /** @default {} */
                    params?: unknown;
                };
            };
        };
        responses: {
            /** @description The tool's outcome */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        durationMs: number;
                        value: unknown;
                    } | {
                        durationMs: number;
                        error: string;
                        message: string;
                        skipped?: string[];
                        status?: number;
                        unknown?: string[];
                    } | {
                        durationMs: number;
                        name: string;
                        params: unknown;
                        /** @constant */
                        route: "client";
                    };
                };
            };
            /** @description invalid_json | invalid_id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "invalid_json" | "invalid_id";
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description tool_not_allowed | forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "tool_not_allowed" | "forbidden";
                    };
                };
            };
            /** @description tool_not_found | tool_disabled */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "tool_not_found" | "tool_disabled";
                    };
                };
            };
            /** @description payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "payload_too_large";
                    };
                };
            };
            /** @description unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unsupported_media_type";
                    };
                };
            };
            /** @description invalid_params | validation_failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "invalid_params" | "validation_failed";
                    };
                };
            };
            /** @description busy | rate_limited */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "busy" | "rate_limited";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
    getV1TenantsByTenantSecrets: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                tenant: components["schemas"]["TenantId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The secrets */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        secrets: {
                            name: string;
                            updatedAt: string;
                        }[];
                    };
                };
            };
            /** @description invalid_id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "invalid_id";
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "forbidden";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
    putV1TenantsByTenantSecretsByName: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                name: string;
                tenant: components["schemas"]["TenantId"];
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    value: string;
                };
            };
        };
        responses: {
            /** @description Stored, encrypted; the value is never returned */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description invalid_json | invalid_id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "invalid_json" | "invalid_id";
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "forbidden";
                    };
                };
            };
            /** @description payload_too_large */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "payload_too_large";
                    };
                };
            };
            /** @description unsupported_media_type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unsupported_media_type";
                    };
                };
            };
            /** @description validation_failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "validation_failed";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
    deleteV1TenantsByTenantSecretsByName: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                name: string;
                tenant: components["schemas"]["TenantId"];
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description invalid_id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "invalid_id";
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "forbidden";
                    };
                };
            };
            /** @description secret_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "secret_not_found";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
    getV1Types: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The registered tool types */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        types: {
                            description: string;
                            parametersSchema: {
                                [key: string]: unknown;
                            };
                            typeId: string;
                        }[];
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "forbidden";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
    getV1TypesByTypeId: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                typeId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The tool type */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        description: string;
                        parametersSchema: {
                            [key: string]: unknown;
                        };
                        typeId: string;
                    };
                };
            };
            /** @description invalid_id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "invalid_id";
                    };
                };
            };
            /** @description unauthenticated */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "unauthenticated";
                    };
                };
            };
            /** @description forbidden */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "forbidden";
                    };
                };
            };
            /** @description type_not_found */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "type_not_found";
                    };
                };
            };
            /** @description internal_error */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "internal_error";
                    };
                };
            };
            /** @description store_unavailable | issuer_unavailable */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["Problem"] & {
                        /** @enum {string} */
                        code?: "store_unavailable" | "issuer_unavailable";
                    };
                };
            };
        };
    };
}
