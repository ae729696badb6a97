// The side panel: connection status, a task box that starts a run on the current tab, the tabs handed over (each can be
// taken back), each run's steps, log and search tree live, and the confirmation card when the backend asks before a
// flagged action.
import { cardPause, countdownText, remainingSeconds, renderConfirm } from "./lib/confirmview.js";
import { STORAGE } from "./lib/constants.js";
import { newerStatus } from "./lib/status.js";
import { el, renderTree } from "./lib/treeview.js";

const statusEl = document.getElementById("status");
const form = document.getElementById("task-form");
const taskEl = document.getElementById("task");
const startEl = document.getElementById("start");
const stopEl = document.getElementById("stop");
const problemEl = document.getElementById("problem");
const runsEl = document.getElementById("runs");
const confirmsEl = document.getElementById("confirms");
const learntEl = document.getElementById("learnt");
const learntSiteEl = document.getElementById("learnt-site");
const demosEl = document.getElementById("demos");
const handedEl = document.getElementById("handed");
const handedHintEl = document.getElementById("handed-hint");
const handedTabsEl = document.getElementById("handed-tabs");
const handedProblemEl = document.getElementById("handed-problem");

const LABELS = { connected: "Connected to the backend", connecting: "Connecting…", disconnected: "Not connected",
  refused: "Refused by the backend", unpaired: "Not paired" };
let connected = false;
let activeRunId = null;
let shownRuns = [];
let handedTabs = [];
let shownStatus = null;

function showStatus(connection) {
  if (!newerStatus(connection, shownStatus)) return;
  shownStatus = connection;
  connected = connection.state === "connected";
  statusEl.dataset.state = connection.state;
  statusEl.textContent = `${LABELS[connection.state] || connection.state}${connection.detail && !connected ? ": " + connection.detail : ""}`;
  startEl.disabled = !connected || Boolean(activeRunId);
  showRuns(shownRuns); // Resume buttons follow the connection too
  if (connected) showDemos();
}

// "Learnt about this site": the demonstrations `branchwise explore` kept for the site of the tab a run would start on.
async function showDemos() {
  const tab = await targetTab().catch(() => null);
  if (!tab || !connected) return;
  const reply = await chrome.runtime.sendMessage({ kind: "list_demos", tabId: tab.id }).catch(() => null);
  if (!reply || reply.error || !reply.site) {
    learntEl.hidden = true;
    return;
  }
  learntEl.hidden = false;
  learntEl.dataset.site = reply.site;
  learntSiteEl.textContent = reply.demos.length
    ? `${reply.demos.length} demonstration(s) for ${reply.site}, shown to the model with --examples.`
    : `Nothing yet for ${reply.site}: run branchwise explore on it to learn.`;
  demosEl.replaceChildren(...reply.demos.map((demo) => el("li", { class: "demo", "data-demo-id": demo.demo_id },
    el("span", { class: "instruction" }, demo.instruction),
    el("span", { class: "hint" }, ` ${demo.steps} steps, score ${demo.score}/5`))));
}

// The tabs handed over, each with Take back. While a run goes on the button waits for Stop: the run may be using any
// of them, and a tab taken from under it would end it with a browser error instead of the user's stop.
function renderHanded() {
  handedEl.hidden = !handedTabs.length && !handedProblemEl.textContent;
  handedHintEl.textContent = activeRunId
    ? "A run is going on: stop it to take a tab back."
    : "Branchwise may read and drive these tabs until you take them back.";
  handedTabsEl.replaceChildren(...handedTabs.map((tab) => {
    const button = el("button", { type: "button", class: "secondary take-back" }, "Take back");
    button.disabled = Boolean(activeRunId);
    button.addEventListener("click", () => takeBack(tab.tab_id, button));
    return el("li", { "data-tab-id": String(tab.tab_id) },
      el("span", { class: "tab-title", title: tab.url }, tab.title || tab.url), button);
  }));
}

async function showHanded() {
  const reply = await chrome.runtime.sendMessage({ kind: "list_tabs" }).catch(() => null);
  if (!reply || reply.error) return;
  handedTabs = reply.tabs;
  renderHanded();
}

// The list is drawn again when the tab's record changes (the storage listener below); a problem is said beside it, as
// the tab may have left the list.
async function takeBack(tabId, button) {
  button.disabled = true;
  handedProblemEl.textContent = "";
  const reply = await chrome.runtime.sendMessage({ kind: "take_back", tabId }).catch((error) => ({ error: error.message }));
  if (reply?.error) {
    handedProblemEl.textContent = `Tab not taken back: ${reply.error}`;
    button.disabled = Boolean(activeRunId);
    renderHanded();
  }
}

function renderRun(run) {
  const badge = el("span", { class: `badge ${run.status}` }, run.status);
  const header = el("header", {}, el("span", { class: "task" }, run.task), badge);
  const box = el("article", { class: "run", "data-run-id": run.run_id }, header);
  if (run.scripted_model) {
    box.append(el("p", { class: "hint" }, el("span", { class: "badge scripted" }, "scripted model"),
      " No model is configured: answers come from the bundled script."));
  }
  const steps = el("ol", { class: "steps" });
  for (const step of run.steps) {
    const item = el("li", { class: "step" }, el("span", { class: "action" }, step.action || "…"));
    if (step.thought) item.append(el("div", { class: "thought" }, step.thought));
    if (step.url) item.append(el("div", { class: "url" }, step.url));
    steps.append(item);
  }
  box.append(steps);
  if (run.log?.length) {
    box.append(el("ol", { class: "run-log", "aria-label": "Run log" },
      ...run.log.map((line) => el("li", { class: "log-line" }, line))));
  }
  if (run.tree?.nodes?.length) box.append(renderTree(run.tree));
  if (run.answer) box.append(el("div", { class: "answer" }, el("strong", {}, "Answer: "), run.answer));
  if (run.message) box.append(el("p", { class: run.status === "failed" ? "error" : "hint" }, run.message));
  if (run.resumable) {
    const resume = el("button", { type: "button", class: "resume" }, "Resume");
    const problem = el("p", { class: "error resume-problem", role: "alert" });
    resume.disabled = !connected || Boolean(activeRunId);
    resume.addEventListener("click", () => resumeRun(run.run_id, resume, problem));
    box.append(el("div", { class: "row" }, resume), problem);
  }
  return box;
}

async function resumeRun(runId, button, problem) {
  button.disabled = true;
  problem.textContent = "";
  const reply = await chrome.runtime.sendMessage({ kind: "resume_run", runId }).catch((error) => ({ error: error.message }));
  if (reply?.error) {
    problem.textContent = reply.error;
    button.disabled = false;
  }
}

function showRuns(runs = []) {
  shownRuns = runs;
  const running = runs.find((r) => r.status === "running");
  activeRunId = running ? running.run_id : null;
  runsEl.replaceChildren(...runs.map(renderRun));
  stopEl.disabled = !activeRunId;
  startEl.disabled = !connected || Boolean(activeRunId);
  renderHanded();
}

// The oldest waiting confirmation is shown; the others follow once it is answered.
let confirms = [];
// The card shown last and since when (cardPause).
let shownCard = null;

async function answer(approvalId, approved) {
  const card = document.getElementById("confirm-card");
  card?.querySelectorAll("button").forEach((b) => { b.disabled = true; });
  const reply = await chrome.runtime.sendMessage({ kind: "confirm_answer", approvalId, approved }).catch(
    (error) => ({ error: error.message }));
  if (reply?.error && card) {
    card.querySelector(".confirm-problem").textContent = reply.error;
    card.querySelectorAll("button").forEach((b) => { b.disabled = false; });
  }
}

function showConfirms(list = []) {
  confirms = [...list].sort((a, b) => a.received_at - b.received_at);
  if (!confirms.length) {
    confirmsEl.replaceChildren();
    return;
  }
  const card = renderConfirm(confirms[0], confirms.length - 1, answer);
  const pause = cardPause(shownCard, confirms[0].approval_id);
  shownCard = pause.shown;
  if (pause.waitMs > 0) {
    const buttons = [...card.querySelectorAll("button")].filter((b) => !b.disabled);
    buttons.forEach((b) => { b.disabled = true; });
    setTimeout(() => buttons.forEach((b) => { b.disabled = false; }), pause.waitMs);
  }
  confirmsEl.replaceChildren(card);
  // The user sees the card now: the badge that called them here has done its job.
  chrome.action.setBadgeText({ text: "" }).catch(() => {});
}

function tickCountdown() {
  const card = document.getElementById("confirm-card");
  const shown = card && confirms.find((c) => c.approval_id === card.dataset.approvalId);
  if (!shown) return;
  const countdown = card.querySelector(".confirm-countdown");
  countdown.dataset.remaining = remainingSeconds(shown);
  countdown.textContent = countdownText(shown);
  if (remainingSeconds(shown) === 0) card.querySelectorAll("button").forEach((b) => { b.disabled = true; });
}

setInterval(tickCountdown, 1000);

// The tab a run starts on: the active tab of this window. When this page is itself open as a tab (rather than in the
// side panel), that is the tab the user was on just before.
async function targetTab() {
  const self = await chrome.tabs.getCurrent();
  if (!self) {
    const [active] = await chrome.tabs.query({ active: true, currentWindow: true });
    return active;
  }
  const others = await chrome.tabs.query({ windowId: self.windowId });
  return others
    .filter((t) => t.id !== self.id && /^https?:/.test(t.url || ""))
    .sort((a, b) => (b.lastAccessed || 0) - (a.lastAccessed || 0))[0];
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  problemEl.textContent = "";
  const task = taskEl.value.trim();
  if (!task) {
    problemEl.textContent = "Describe the task first.";
    return;
  }
  const tab = await targetTab();
  if (!tab) {
    problemEl.textContent = "No tab is open in this window.";
    return;
  }
  startEl.disabled = true;
  const reply = await chrome.runtime.sendMessage({ kind: "start_run", task, tabId: tab.id });
  if (reply?.error) {
    problemEl.textContent = reply.error;
    startEl.disabled = !connected;
  }
});

stopEl.addEventListener("click", () => {
  if (activeRunId) chrome.runtime.sendMessage({ kind: "stop_run", runId: activeRunId });
});

chrome.storage.onChanged.addListener((changes, area) => {
  if (area !== "session") return;
  if (changes[STORAGE.connection]) showStatus(changes[STORAGE.connection].newValue);
  if (changes[STORAGE.runs]) showRuns(changes[STORAGE.runs].newValue);
  if (changes[STORAGE.confirms]) showConfirms(changes[STORAGE.confirms].newValue);
  if (changes[STORAGE.tabState]) showHanded();
});

async function init() {
  const { [STORAGE.runs]: runs, [STORAGE.confirms]: waiting } =
    await chrome.storage.session.get([STORAGE.runs, STORAGE.confirms]);
  showRuns(runs);
  showConfirms(waiting);
  const reply = await chrome.runtime.sendMessage({ kind: "status" }).catch(() => null);
  showStatus(reply?.connection);
  if (reply?.tabs) {
    handedTabs = reply.tabs;
    renderHanded();
  }
}

chrome.tabs.onActivated.addListener(() => showDemos());
chrome.tabs.onUpdated.addListener((_, change) => {
  if (change.url) showDemos();
  if (change.title) showHanded();
});

init();
