// Element facts for the backend's action classifier: what the accessibility tree does not say (the element's form and
// its effective method and action, a link's target, inline handlers). One command answers for all candidates of a
// planner step; an element that is gone is reported as {found: false}, never as an error.
import { currentDialog, ensureAttached, send, sessionFor } from "./cdp.js";
import { openChannels } from "./channels.js";
import { tabState } from "./tabstate.js";

// Runs with `this` = the element (or a text node inside it). Form rules follow HTML's submission algorithm: the
// submitter's formmethod/formaction/formtarget win over the form's, and Enter in a field clicks the form's default
// button, or submits a form that has none only when it holds a single field that blocks implicit submission.
const FACTS = `function() {
  const el = this.nodeType === Node.ELEMENT_NODE ? this : this.parentElement;
  if (!el || !el.isConnected) return { found: false };
  const control = el.closest("button, input, select, textarea") || el;
  const tag = control.tagName.toLowerCase();
  const isSubmit = (c) => (c.tagName === "BUTTON" || c.tagName === "INPUT")
    && (c.type === "submit" || c.type === "image");
  const BLOCKING = ["text", "search", "url", "tel", "email", "password", "date", "month", "week", "time",
    "datetime-local", "number"];
  const labelOf = (c) => (c.getAttribute("aria-label") || c.innerText || c.value || "").replace(/\\s+/g, " ").trim()
    .slice(0, 120);

  const facts = {
    found: true,
    tag,
    type: tag === "input" || tag === "button" ? control.type : "",
    role: el.getAttribute("role") || "",
    disabled: control.matches(":disabled"),
    contenteditable: el.isContentEditable,
    document_url: document.URL,
    inline_handlers: [],
    service_worker: Boolean(navigator.serviceWorker && navigator.serviceWorker.controller),
  };

  // An SVG link's href and target are SVGAnimatedString objects, not strings.
  const link = el.closest("a[href], area[href]");
  if (link) {
    const raw = link.getAttribute("href") || "";
    facts.link = {
      href: typeof link.href === "string" ? link.href : new URL(raw, document.baseURI).href,
      raw_href: raw,
      target: typeof link.target === "string" ? link.target : link.target?.baseVal || "",
    };
  }

  // A form control's owner honours its form= attribute; anything else belongs to the form around it. The form's own
  // properties are read through its prototype: a field named "action" or "method" (WordPress forms have both) shadows
  // form.action and form.method.
  const form = ["BUTTON", "INPUT", "SELECT", "TEXTAREA"].includes(control.tagName) ? control.form : el.closest("form");
  const formProp = (name) => Object.getOwnPropertyDescriptor(HTMLFormElement.prototype, name).get.call(form);
  if (form) {
    const elements = [...formProp("elements")];
    const buttons = elements.filter(isSubmit);
    let submitter = null;
    let submits = false;
    if (isSubmit(control)) {
      submitter = control;
      submits = true;
    } else if (tag === "input" && BLOCKING.includes(control.type)) {
      submitter = buttons[0] || null;
      const fields = elements.filter((c) => c.tagName === "INPUT" && BLOCKING.includes(c.type));
      submits = submitter ? !submitter.disabled : fields.length === 1;
    }
    const own = (name) => submitter && submitter.hasAttribute(name);
    // What the browser would refuse to send, read off ValidityState: checkValidity() would fire events at the page.
    const refused = (c) => c.willValidate && !c.validity.valid;
    facts.form = {
      method: own("formmethod") ? submitter.formMethod : formProp("method"),
      action: own("formaction") ? submitter.formAction : formProp("action"),
      target: own("formtarget") ? submitter.formTarget : formProp("target"),
      submits,
      submit_buttons: buttons.filter((b) => !b.disabled).length,
      submitter_label: submitter ? labelOf(submitter) : "",
      validates: !formProp("noValidate") && !(submitter && submitter.formNoValidate),
      invalid_fields: elements.filter((c) => c !== control && refused(c)).length,
      element_invalid: refused(control),
    };
  }

  const handlers = new Set();
  for (let node = el; node && node !== document.body; node = node.parentElement) {
    for (const attr of node.attributes) if (attr.name.startsWith("on")) handlers.add(attr.name);
    if (node === form) break;
  }
  facts.inline_handlers = [...handlers].slice(0, 10);
  return facts;
}`;

async function factsOf(tabId, ref) {
  let sessionId;
  try {
    sessionId = sessionFor(tabId, ref.target);
  } catch {
    return { found: false };
  }
  let object;
  try {
    ({ object } = await send(tabId, "DOM.resolveNode", { backendNodeId: ref.backend_node_id }, sessionId));
  } catch (error) {
    if (error.code === "tab_closed") throw error;
    return { found: false };
  }
  try {
    const { result, exceptionDetails } = await send(tabId, "Runtime.callFunctionOn", {
      objectId: object.objectId,
      functionDeclaration: FACTS,
      returnByValue: true,
    }, sessionId);
    if (exceptionDetails) {
      console.warn("inspect: reading element facts failed", exceptionDetails.exception?.description);
      return { found: false };
    }
    return result.value;
  } finally {
    send(tabId, "Runtime.releaseObject", { objectId: object.objectId }, sessionId).catch(() => {});
  }
}

// The page's part of the facts: whether the network gate holds the tab's requests now, and what it has open that the
// gate cannot hold.
function withTab(tabId, facts) {
  if (!facts.found) return facts;
  const { service_worker: serviceWorker, ...rest } = facts;
  const ungated = [...openChannels(tabId), ...(serviceWorker ? ["service worker"] : [])];
  return { ...rest, gated: Boolean(tabState(tabId).gate), ungated_channels: ungated };
}

export async function inspect(tabId, refs) {
  await ensureAttached(tabId);
  // While a JavaScript dialog is open the page runs no script: nothing can be read.
  if (currentDialog(tabId)) return { type: "element_facts", facts: refs.map(() => ({ found: false })) };
  const facts = await Promise.all(refs.map((ref) => factsOf(tabId, ref)));
  return { type: "element_facts", facts: facts.map((f) => withTab(tabId, f)) };
}
