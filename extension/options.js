import { STORAGE } from "./lib/constants.js";
import { checkSettings, loadSettings, saveSettings, settingsFromHash } from "./lib/settings.js";
import { loadSiteLists, parseSiteList, saveSiteLists } from "./lib/sites.js";
import { getConnectionStatus, newerStatus } from "./lib/status.js";

const form = document.getElementById("form");
const backend = document.getElementById("backend");
const token = document.getElementById("token");
const problem = document.getElementById("problem");
const status = document.getElementById("status");

const LABELS = { connected: "Connected", connecting: "Connecting…", disconnected: "Not connected", refused: "Refused",
  unpaired: "Not paired" };

let shownStatus = null;

function showStatus(connection) {
  if (!newerStatus(connection, shownStatus)) return;
  shownStatus = connection;
  status.dataset.state = connection.state;
  status.textContent = `${LABELS[connection.state] || connection.state}${connection.detail ? ": " + connection.detail : ""}`;
}

async function save(settings) {
  const error = checkSettings(settings);
  problem.textContent = error;
  if (error) return;
  // Saving triggers the worker's reconnect through storage.onChanged.
  await saveSettings(settings);
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  await save({ backendUrl: backend.value, token: token.value });
});

const sitesForm = document.getElementById("sites-form");
const allowSites = document.getElementById("allow-sites");
const blockSites = document.getElementById("block-sites");
const sitesProblem = document.getElementById("sites-problem");
const sitesSaved = document.getElementById("sites-saved");

function showSiteLists(lists) {
  allowSites.value = lists.allow.join("\n");
  blockSites.value = lists.block.join("\n");
}

sitesForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  const allow = parseSiteList(allowSites.value);
  const block = parseSiteList(blockSites.value);
  const errors = [...allow.errors, ...block.errors];
  sitesProblem.textContent = errors.join("; ");
  sitesSaved.textContent = "";
  if (errors.length) return;
  // The worker reads the lists from storage on every command: they hold from the next one on.
  await saveSiteLists({ allow: allow.patterns, block: block.patterns });
  showSiteLists({ allow: allow.patterns, block: block.patterns });
  sitesSaved.textContent = "Saved";
});

chrome.storage.onChanged.addListener((changes, area) => {
  if (area === "session" && changes[STORAGE.connection]) showStatus(changes[STORAGE.connection].newValue);
});

async function init() {
  const fromLink = settingsFromHash(location.hash);
  if (fromLink) {
    // Opened from the pairing link the backend printed: save at once and hide the token from the address bar.
    await save(fromLink);
    history.replaceState(null, "", location.pathname);
  }
  const settings = await loadSettings();
  backend.value = settings.backendUrl;
  token.value = settings.token;
  showSiteLists(await loadSiteLists());
  sitesForm.dataset.loaded = "true"; // the lists are in the boxes: typing now is not overwritten
  const reply = await chrome.runtime.sendMessage({ kind: "status" }).catch(() => null);
  showStatus(reply?.connection || (await getConnectionStatus()));
}

init();
