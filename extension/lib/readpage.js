// read_page: the value of a JavaScript expression on a guarded tab's page, as text, for the evaluation harness
// (WebArena's program_html locators such as `document.querySelector('h1').outerText`). Only guarded tabs: their
// mutating requests are blocked, so an expression (or a prep action that clicks) cannot change a site.
import { CommandError } from "./protocol.js";
import { currentDialog, ensureAttached, send } from "./cdp.js";
import { isGuarded } from "./guard.js";

// `String(...)` as WebArena's str(page.evaluate(...)); null and undefined read as "".
function wrap(expression) {
  return `(async () => { const v = await (async () => (${expression}))(); return v == null ? "" : String(v); })()`;
}

async function evaluate(tabId, expression) {
  const { result, exceptionDetails } = await send(tabId, "Runtime.evaluate", {
    expression: wrap(expression),
    awaitPromise: true,
    returnByValue: true,
    userGesture: true,
  });
  if (exceptionDetails) {
    const error = exceptionDetails.exception?.description || exceptionDetails.text || "the expression threw";
    return { ok: false, error: error.split("\n")[0].slice(0, 300) };
  }
  return { ok: true, value: String(result.value ?? "") };
}

export async function readPage(tabId, expression, prep) {
  if (!(await isGuarded(tabId))) {
    throw new CommandError("not_guarded", `tab ${tabId} is not guarded: read_page reads only guarded tabs`);
  }
  await ensureAttached(tabId);
  if (currentDialog(tabId)) return { type: "page_value", ok: false, value: "", error: "a dialog is open" };
  for (const step of prep || []) {
    const done = await evaluate(tabId, step);
    if (!done.ok) console.info(`read_page: a prep action failed (ignored, as WebArena does): ${done.error}`);
  }
  const read = await evaluate(tabId, expression && expression.trim() ? expression : "document.documentElement.outerHTML");
  return { type: "page_value", ok: read.ok, value: read.value || "", error: read.error || "" };
}
