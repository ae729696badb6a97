// Connection status and run updates live in chrome.storage.session, so the side panel and options page can render them
// and hear changes even when the worker was asleep in between.
import { STORAGE } from "./constants.js";

// Each status's `at` is later than the one before, even within a millisecond: a page tells a stale status from a newer
// one by it (see newerStatus).
let lastAt = 0;

export async function setConnectionStatus(state, detail = "") {
  lastAt = Math.max(Date.now(), lastAt + 1);
  await chrome.storage.session.set({ [STORAGE.connection]: { state, detail, at: lastAt } });
}

// Whether `connection` is newer than the status a page shows (null: none yet). A page hears the status twice, from the
// worker's reply to its "status" request and from storage changes, and the two may arrive out of order: a reply read
// before a change can arrive after it, and must not put "Connecting…" back over "Refused".
export function newerStatus(connection, shown) {
  return Boolean(connection) && (!shown || (connection.at || 0) > (shown.at || 0));
}

export async function getConnectionStatus() {
  const { [STORAGE.connection]: connection } = await chrome.storage.session.get(STORAGE.connection);
  return connection || { state: "disconnected", detail: "", at: 0 };
}

const MAX_RUNS = 5;
// Lines of a run's log kept for the panel (search progress, denials and what the planner did about them).
const MAX_LOG_LINES = 80;

// Updates arrive faster than storage round-trips: fold them one at a time so none is lost.
let updateChain = Promise.resolve();

export function applyRunUpdate(update) {
  updateChain = updateChain.then(() => foldRunUpdate(update)).catch((e) => console.warn("run update lost", e));
  return updateChain;
}

// A tree_update carries the whole search tree (tens of nodes): the latest one replaces the run's tree.
export function applyTreeUpdate(update) {
  updateChain = updateChain.then(() => foldTreeUpdate(update)).catch((e) => console.warn("tree update lost", e));
  return updateChain;
}

// The connection to the backend closed: a run shown as running gets no more updates through it, so it shows as cut
// off (Start would stay disabled for a run that is gone). A run still going on in a backend that reconnects is running
// again at its next update; one the backend's exit cut short is offered for resume when the backend is back.
export function markRunsCutOff(why) {
  updateChain = updateChain.then(async () => {
    const runs = await loadRuns();
    const cut = runs.filter(goingOn);
    for (const run of cut) Object.assign(run, { status: "interrupted", message: why, resumable: false });
    if (cut.length) await saveRuns(runs);
  }).catch((e) => console.warn("runs not marked as cut off", e));
  return updateChain;
}

// A live update of a run: a started one is running, and one marked as cut off is running again, its note gone.
function goOn(run) {
  if (run.status === "interrupted" && !run.resumable) run.message = "";
  if (run.status === "started" || (run.status === "interrupted" && !run.resumable)) run.status = "running";
}

// A run the panel shows as going on: started, or running.
function goingOn(run) {
  return run.status === "running" || run.status === "started";
}

// Whether the panel shows a run going on (the side panel's Take back waits for it to end).
export async function runGoingOn() {
  await updateChain;
  return (await loadRuns()).some(goingOn);
}

async function loadRuns() {
  const { [STORAGE.runs]: runs = [] } = await chrome.storage.session.get(STORAGE.runs);
  return runs;
}

async function saveRuns(runs) {
  await chrome.storage.session.set({ [STORAGE.runs]: runs.slice(0, MAX_RUNS) });
}

function findOrAddRun(runs, update) {
  let run = runs.find((r) => r.run_id === update.run_id);
  if (!run) {
    run = { run_id: update.run_id, task: update.task || "", status: "started", steps: [], answer: "", message: "" };
    runs.unshift(run);
  }
  return run;
}

async function foldTreeUpdate(update) {
  const runs = await loadRuns();
  const run = findOrAddRun(runs, update);
  goOn(run);
  const { strategy, nodes, current = null, frontier = [], backtracks = [], trajectory = [] } = update;
  run.tree = { strategy, nodes, current, frontier, backtracks, trajectory };
  await saveRuns(runs);
}

// Folds one run_update message into the stored run history shown by the side panel.
async function foldRunUpdate(update) {
  const runs = await loadRuns();
  const run = findOrAddRun(runs, update);
  if (update.task) run.task = update.task;
  // The offer's text is about the interruption: once the run goes on, it no longer applies.
  if (run.status === "interrupted" && update.status !== "interrupted") run.message = "";
  run.scripted_model = Boolean(update.scripted_model) || Boolean(run.scripted_model);
  if (update.status === "progress") {
    run.log = [...(run.log || []), update.message || ""].slice(-MAX_LOG_LINES);
    goOn(run);
    await saveRuns(runs);
    return;
  }
  if (update.status === "step") {
    run.steps = run.steps.filter((s) => s.step !== update.step);
    run.steps.push({ step: update.step, url: update.url, thought: update.thought || "", action: update.action || "" });
    run.steps.sort((a, b) => a.step - b.step);
    run.status = "running";
  } else {
    run.status = update.status === "started" ? "running" : update.status;
  }
  // Offered after a backend restart: the panel shows Resume while it can go on; any other update ends the offer.
  run.resumable = update.status === "interrupted" && Boolean(update.resumable);
  if (update.answer) run.answer = update.answer;
  if (update.message) run.message = update.message;
  await saveRuns(runs);
}
