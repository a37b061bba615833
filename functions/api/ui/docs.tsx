/** @jsxImportSource hono/jsx */
import type { OpenAPIV3_1 } from "openapi-types";
import type { OpenApiDocument } from "../openapi";
import { ColumnHeads, Layout } from "./pages";

const METHODS = ["get", "put", "post", "delete"] as const;

type OperationObject = OpenAPIV3_1.OperationObject;

interface Listed {
  readonly method: (typeof METHODS)[number];
  readonly path: string;
  readonly operation: OperationObject;
}

function operationsOf(document: OpenApiDocument): Listed[] {
  return Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    METHODS.flatMap((method) => {
      const operation = item?.[method];
      return operation ? [{ method, path, operation }] : [];
    }),
  );
}

function anchorOf(listed: Listed): string {
  return `op-${listed.method}-${listed.path.replace(/[^A-Za-z0-9]+/g, "-").replace(/^-|-$/g, "")}`;
}

function Parameters(props: { operation: OperationObject }) {
  const parameters = (props.operation.parameters ?? []) as OpenAPIV3_1.ParameterObject[];
  if (parameters.length === 0) return null;
  return (
    <table>
      <caption>Parameters</caption>
      <ColumnHeads names={["Name", "In", "Required", "About"]} />
      <tbody>
        {parameters.map((parameter) => (
          <tr>
            <th scope="row">
              <code>{parameter.name}</code>
            </th>
            <td>{parameter.in}</td>
            <td>{parameter.required ? "yes" : "no"}</td>
            <td>{parameter.description ?? ""}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Responses(props: { operation: OperationObject }) {
  const responses = Object.entries(props.operation.responses ?? {}) as [string, OpenAPIV3_1.ResponseObject][];
  return (
    <table>
      <caption>Answers (problems are application/problem+json with these codes)</caption>
      <ColumnHeads names={["Status", "Media type", "What"]} />
      <tbody>
        {responses.map(([status, response]) => (
          <tr>
            <th scope="row">{status}</th>
            <td>
              <code>{Object.keys(response.content ?? {}).join(", ") || "—"}</code>
            </td>
            <td>{response.description}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * `/docs`: the routes of `/openapi.json` grouped by tag, each with its parameters, request media
 * types and answers, in the web listing's style and under its CSP — no script or style from
 * elsewhere. Tools that render OpenAPI (Swagger UI, editors, client generators) read
 * `/openapi.json` itself.
 */
export function DocsPage(props: { document: OpenApiDocument }) {
  const { document } = props;
  const listed = operationsOf(document);
  const tags = [...new Set(listed.map((entry) => entry.operation.tags?.[0] ?? "other"))];
  const { title, version } = document.info;
  return (
    <Layout title="API reference" session="public">
      <h1>{`${title} API`}</h1>
      <p>
        {`Version ${version}. `}Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1, for
        client generators and API tools). The tools of a project are browsed in the{" "}
        <a href="/ui/">tool listing</a>. Every route but the public ones takes{" "}
        <code>Authorization: Bearer &lt;jwt&gt;</code>.
      </p>
      <nav aria-label="Tags">
        <ul class="names">
          {tags.map((tag) => (
            <li>
              <a href={`#tag-${tag}`}>{tag}</a>
            </li>
          ))}
        </ul>
      </nav>
      {tags.map((tag) => (
        <section aria-labelledby={`tag-${tag}`}>
          <h2 id={`tag-${tag}`}>{tag}</h2>
          <div class="scroll">
            <table class="stack">
              <caption>{`Routes tagged ${tag}`}</caption>
              <ColumnHeads names={["Method", "Path", "Summary"]} />
              <tbody>
                {listed
                  .filter((entry) => (entry.operation.tags?.[0] ?? "other") === tag)
                  .map((entry) => (
                    <tr>
                      <td data-label="Method">
                        <code>{entry.method.toUpperCase()}</code>
                      </td>
                      <th scope="row">
                        <a href={`#${anchorOf(entry)}`}>
                          <code>{entry.path}</code>
                        </a>
                      </th>
                      <td data-label="Summary">{entry.operation.summary ?? ""}</td>
                    </tr>
                  ))}
              </tbody>
            </table>
          </div>
          {listed
            .filter((entry) => (entry.operation.tags?.[0] ?? "other") === tag)
            .map((entry) => (
              <details class="pack-group" id={anchorOf(entry)}>
                <summary>
                  <code>{`${entry.method.toUpperCase()} ${entry.path}`}</code>
                </summary>
                <p>
                  {entry.operation.summary ?? ""}
                  {entry.operation.security?.length === 0 ? " Public: no token." : ""}
                </p>
                {entry.operation.requestBody ? (
                  <p>
                    Body:{" "}
                    <code>
                      {Object.keys(
                        (entry.operation.requestBody as OpenAPIV3_1.RequestBodyObject).content,
                      ).join(", ")}
                    </code>
                  </p>
                ) : null}
                <div class="scroll">
                  <Parameters operation={entry.operation} />
                  <Responses operation={entry.operation} />
                </div>
              </details>
            ))}
        </section>
      ))}
    </Layout>
  );
}

/** The `/docs` page as an HTML document. */
export async function docsPage(document: OpenApiDocument): Promise<string> {
  return `<!DOCTYPE html>${await (<DocsPage document={document} />)}`;
}
