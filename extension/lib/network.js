// Streams the requests made by handed-over tabs (method, URL, type, time) to the backend.
import { isHanded } from "./tabstate.js";
import { newId } from "./protocol.js";

export function watchRequests(emit) {
  chrome.webRequest.onBeforeRequest.addListener(
    (details) => {
      if (details.tabId < 0 || !isHanded(details.tabId)) return;
      emit({
        type: "network_request",
        id: newId(),
        tab_id: details.tabId,
        request_id: String(details.requestId),
        method: details.method,
        url: details.url,
        resource_type: details.type,
        time: details.timeStamp,
      });
    },
    { urls: ["<all_urls>"] },
  );
}
