// Evaluating an expression in a world of our own in a frame: the page neither sees nor disturbs what runs there. The
// world lives as long as the frame's document; after a navigation the next evaluation makes one in the new document.
import { send } from "./cdp.js";

export class World {
  constructor(name) {
    this.name = name;
    this.contexts = new Map(); // tabId -> Map(key -> execution context id)
  }

  // The expression's value (by value) in the frame's world, or undefined when it cannot be read (mid-navigation,
  // the frame gone). `frame`: the frame id, or an async function giving it, asked only when a world must be made.
  // `key` names the frame among the tab's (frame ids repeat across out-of-process targets).
  async evaluate(tabId, frame, expression, { sessionId = undefined, key = frame } = {}) {
    let known = this.contexts.get(tabId);
    if (!known) this.contexts.set(tabId, (known = new Map()));
    for (let attempt = 0; attempt < 2; attempt++) {
      let contextId = known.get(key);
      try {
        if (contextId === undefined) {
          const frameId = typeof frame === "function" ? await frame() : frame;
          ({ executionContextId: contextId } = await send(tabId, "Page.createIsolatedWorld",
            { frameId, worldName: this.name }, sessionId));
          known.set(key, contextId);
        }
        const { result, exceptionDetails } = await send(tabId, "Runtime.evaluate",
          { expression, contextId, returnByValue: true }, sessionId);
        if (!exceptionDetails) return result.value;
      } catch {
        // The document went away (a navigation): a new world for the new document.
      }
      known.delete(key);
    }
    return undefined;
  }

  forget(tabId) {
    this.contexts.delete(tabId);
  }
}
