/**
 * The web listing's only script and style sheet, served from `/ui/assets/` so the pages' CSP can
 * forbid inline scripts and styles. Kept as strings: the Lambda bundle carries no files.
 */

/**
 * Sent (`true`) by the script once the user confirmed replacing a session for another tenant: a
 * `#token=` link alone never swaps the tenant someone is signed in for (login CSRF).
 */
export const REPLACE_SESSION_HEADER = "vance-replace-session";

/**
 * Moves `#token=<jwt>` out of the URL into the tab's session storage and trades it for the
 * listing's short-lived HttpOnly cookie (`POST /ui/session`, bearer header); a page that finds
 * no session tries once with the stored token, so an expired cookie renews itself in the tab.
 * A token for another tenant than the open session's is traded only after the user confirms.
 */
export const UI_SCRIPT = `"use strict";
(() => {
  const KEY = "vance-ui-token";
  const PREVIOUS = "vance-ui-token-previous";
  const TRIED = "vance-ui-tried";
  const status = document.getElementById("session-status");
  const say = (text) => {
    if (status) status.textContent = text;
  };

  async function signIn(replace) {
    const token = sessionStorage.getItem(KEY);
    if (!token) return;
    sessionStorage.setItem(TRIED, "1");
    say("Signing in…");
    const headers = { authorization: "Bearer " + token };
    if (replace) headers["${REPLACE_SESSION_HEADER}"] = "true";
    const response = await fetch("/ui/session", { method: "POST", headers, credentials: "same-origin" });
    if (response.ok) {
      sessionStorage.removeItem(PREVIOUS);
      location.reload();
      return;
    }
    const problem = await response.json().catch(() => ({}));
    if (problem.code === "session_conflict") {
      confirmReplace(problem);
      return;
    }
    sessionStorage.removeItem(KEY);
    say("The token was refused: " + (problem.detail || response.status) + " (" + (problem.code || "error") + ")");
  }

  // A #token= link for another tenant than the open session's (perhaps someone else's link):
  // the session is replaced only when the user says so.
  function confirmReplace(problem) {
    say(problem.detail + ".");
    const choices = document.createElement("span");
    const button = (label, quiet, act) => {
      const element = document.createElement("button");
      element.type = "button";
      element.textContent = label;
      if (quiet) element.className = "quiet";
      element.addEventListener("click", () => {
        choices.remove();
        act();
      });
      choices.append(" ", element);
    };
    const named = (tenant) => (tenant === "*" ? "all tenants" : "tenant " + tenant);
    // Staying is the safe choice, so it is the prominent one.
    button("Stay with " + named(problem.signedIn), false, () => {
      const previous = sessionStorage.getItem(PREVIOUS);
      if (previous) sessionStorage.setItem(KEY, previous);
      else sessionStorage.removeItem(KEY);
      sessionStorage.removeItem(PREVIOUS);
      say("Still signed in for " + named(problem.signedIn) + "; the link's token was dropped.");
    });
    button("Switch to " + named(problem.offered), true, () => void signIn(true));
    if (status) status.after(choices);
  }

  async function signOut() {
    sessionStorage.removeItem(KEY);
    sessionStorage.removeItem(PREVIOUS);
    sessionStorage.removeItem(TRIED);
    await fetch("/ui/session", { method: "DELETE", credentials: "same-origin" });
    location.assign("/ui/");
  }

  const out = document.getElementById("sign-out");
  if (out) out.addEventListener("click", () => void signOut());

  // A pasted token goes the way a fragment's does: into session storage, then a bearer header.
  const form = document.getElementById("token-form");
  const input = document.getElementById("token-input");
  if (form && input) {
    form.hidden = false;
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const token = input.value.trim();
      if (!token) return;
      sessionStorage.setItem(KEY, token);
      sessionStorage.removeItem(TRIED);
      input.value = "";
      void signIn();
    });
  }

  // The tool listing's filter: rows whose name, type, labels or description hold every word typed.
  const filterBox = document.getElementById("tool-filter-box");
  const filter = document.getElementById("tool-filter");
  const filterCount = document.getElementById("tool-filter-count");
  if (filterBox && filter) {
    filterBox.hidden = false;
    const apply = () => {
      // Doubled backslash: inside this template literal a lone one vanishes, and /s+/ split on the letter s.
      const words = filter.value.toLowerCase().split(/\\s+/).filter(Boolean);
      const matches = (row) => words.every((word) => (row.dataset.search || "").includes(word));
      let shown = 0;
      let total = 0;
      for (const group of document.querySelectorAll("#tools > tbody, details.pack-group")) {
        const rows = [...group.querySelectorAll("tr[data-search]")];
        const head = group.matches("tbody.pack") ? rows.shift() : undefined;
        let any = false;
        for (const row of rows) {
          const hit = matches(row);
          row.hidden = !hit;
          any = any || hit;
          total++;
          if (hit) shown++;
        }
        if (head) head.hidden = words.length > 0 && !any && !matches(head);
        if (group.matches("details.pack-group")) {
          group.hidden = !any;
          group.open = any && words.length > 0;
        }
      }
      if (filterCount) filterCount.textContent = words.length === 0 ? "" : shown + " of " + total + " tools match";
    };
    filter.addEventListener("input", apply);
  }

  const match = /(?:^|&)token=([^&]+)/.exec(location.hash.slice(1));
  if (match) {
    const previous = sessionStorage.getItem(KEY);
    if (previous) sessionStorage.setItem(PREVIOUS, previous);
    sessionStorage.setItem(KEY, decodeURIComponent(match[1]));
    sessionStorage.removeItem(TRIED);
    // The token leaves the address bar (and the history) at once.
    history.replaceState(null, "", location.pathname + location.search);
    void signIn(false);
    return;
  }
  if (document.body.dataset.session === "missing") {
    if (sessionStorage.getItem(KEY) && !sessionStorage.getItem(TRIED)) void signIn(false);
  } else {
    sessionStorage.removeItem(TRIED);
  }
})();
`;

/** Small, readable on a phone, WCAG AA contrast (text #1b1f24 on #fff; badges dark on light). */
export const UI_STYLES = `:root { color-scheme: light; --fg: #1b1f24; --muted: #4a5360; --line: #d0d7de; --link: #0a4fb3; --bg-alt: #f4f6f8; }
* { box-sizing: border-box; }
/* The filter hides rows that the phone layout shows as blocks: hidden must win over display. */
[hidden] { display: none !important; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: #fff; }
a { color: var(--link); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, summary:focus-visible { outline: 3px solid #0a4fb3; outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: #fff; padding: .5rem; }
.skip:focus { left: .5rem; }
header.site { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; justify-content: space-between; padding: .75rem 1rem; border-bottom: 1px solid var(--line); background: var(--bg-alt); }
header.site .brand { font-weight: 700; text-decoration: none; color: var(--fg); }
header.site .who { color: var(--muted); font-size: .9rem; }
nav.site-links { display: flex; gap: 1rem; margin-right: auto; }
ul.projects { columns: 14rem; padding-left: 1.2rem; }
ul.projects li { break-inside: avoid; overflow-wrap: anywhere; }
.filter { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; margin: .5rem 0; }
.filter label { display: flex; gap: .5rem; align-items: center; font-weight: 600; }
.filter input { width: min(24rem, 70vw); }
details.pack-group { margin: 1rem 0; border: 1px solid var(--line); border-radius: .25rem; padding: .25rem .75rem; }
details.pack-group > summary { cursor: pointer; font-weight: 600; padding: .25rem 0; }
main { padding: 1rem; max-width: 72rem; margin: 0 auto; }
nav.crumbs ol { list-style: none; display: flex; flex-wrap: wrap; gap: .25rem; padding: 0; margin: 0 0 .5rem; font-size: .9rem; }
nav.crumbs li + li::before { content: "›"; margin-right: .25rem; color: var(--muted); }
nav.tabs ul { list-style: none; display: flex; gap: 1rem; padding: 0; margin: .5rem 0 1rem; border-bottom: 1px solid var(--line); }
nav.tabs a { display: inline-block; padding: .25rem 0; text-decoration: none; }
nav.tabs a[aria-current="page"] { border-bottom: 3px solid var(--link); font-weight: 600; color: var(--fg); }
h1 { font-size: 1.5rem; margin: .25rem 0 .75rem; word-break: break-word; }
h2 { font-size: 1.2rem; margin: 1.5rem 0 .5rem; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: .95rem; }
caption { text-align: left; color: var(--muted); padding: .25rem 0; }
th, td { text-align: left; vertical-align: top; padding: .4rem .5rem; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
code { overflow-wrap: anywhere; }
th { background: var(--bg-alt); }
tbody.pack th[scope="rowgroup"] { background: #eef2f7; font-weight: 600; }
tr.sub td:first-child { padding-left: 1.5rem; }
.badge { display: inline-block; padding: 0 .4rem; border-radius: .25rem; font-size: .8rem; font-weight: 600; border: 1px solid currentColor; white-space: nowrap; }
.layer-project { color: #0b5a1e; background: #e6f4ea; }
.layer-tenant { color: #7a4100; background: #fff1db; }
.layer-bundled { color: #0a4fb3; background: #e8f0fc; }
.layer-builtin { color: #4a5360; background: #f0f1f3; }
.state-off { color: #8a1c1c; background: #fdecec; }
.label { display: inline-block; margin: 0 .25rem .15rem 0; padding: 0 .35rem; border-radius: 1rem; background: #eef1f4; color: var(--fg); font-size: .8rem; text-decoration: none; }
.muted { color: var(--muted); }
pre { background: var(--bg-alt); border: 1px solid var(--line); padding: .75rem; overflow-x: auto; font-size: .85rem; white-space: pre-wrap; overflow-wrap: anywhere; }
::placeholder { color: #5c6670; opacity: 1; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; word-break: break-word; }
.notice { border-left: 4px solid #b35900; background: #fff7ec; padding: .5rem .75rem; margin: .75rem 0; }
.problem { border-left: 4px solid #a31515; background: #fdecec; padding: .5rem .75rem; margin: .75rem 0; }
form.inline { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: flex-end; margin: .5rem 0 1rem; }
form.inline label { display: flex; flex-direction: column; font-size: .9rem; font-weight: 600; }
input, select, button { font: inherit; padding: .35rem .5rem; border: 1px solid #6e7781; border-radius: .25rem; min-height: 2.25rem; }
button { background: #0a4fb3; color: #fff; border-color: #0a4fb3; cursor: pointer; }
button.quiet { background: #fff; color: var(--link); }
ul.names { columns: 16rem; padding-left: 1.2rem; }
ul.names li { break-inside: avoid; overflow-wrap: anywhere; }
main > *, section { min-width: 0; max-width: 100%; }
input { max-width: 100%; }
@media (max-width: 40rem) {
  body { font-size: 15px; }
  th, td { padding: .35rem; }
  dl.facts { grid-template-columns: 1fr; }
  /* The tool table becomes one card per tool: each cell named by its column. */
  table.stack thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  table.stack tr { display: block; padding: .4rem 0; border-bottom: 1px solid var(--line); }
  table.stack th, table.stack td { display: block; border: 0; padding: .1rem .25rem; }
  table.stack td::before { content: attr(data-label) ": "; font-weight: 600; color: var(--muted); }
  tr.sub td:first-child { padding-left: .25rem; }
}
`;
