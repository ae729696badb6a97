// The user's site allow and block lists (options page, chrome.storage.local). Same rules as the backend's
// safety/sites.py: `shop.example` is that host only, `*.bank.example` the domain and every host under it; the block
// list wins; an empty allow list allows every host not blocked; addresses without a host (about:blank) pass.
import { STORAGE } from "./constants.js";
import { CommandError } from "./protocol.js";

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

// The host of an address as Chrome writes it (lower case, punycode, no port); "" when it has none.
export function hostOf(url) {
  try {
    let parsed = new URL(url);
    if (parsed.protocol === "blob:") parsed = new URL(parsed.pathname);
    return parsed.hostname.replace(/\.$/, "");
  } catch {
    return "";
  }
}

// One list entry -> {domain, subdomains}; throws an Error whose message says what is wrong.
export function parsePattern(text) {
  const raw = text.trim().toLowerCase();
  const subdomains = raw.startsWith("*.");
  let host = subdomains ? raw.slice(2) : raw;
  // A pasted address counts as its host; new URL() also turns a Unicode name into punycode, as Chrome shows hosts.
  host = hostOf(host.includes("://") ? host : `http://${host}`) || "";
  if (!host) throw new Error(`"${text.trim()}" names no host (write shop.example or *.shop.example)`);
  if (!host.split(".").every((label) => LABEL.test(label))) {
    throw new Error(`"${text.trim()}" is not a host name (write shop.example or *.shop.example)`);
  }
  return { domain: host, subdomains };
}

export function patternText(pattern) {
  return pattern.subdomains ? `*.${pattern.domain}` : pattern.domain;
}

function matches(pattern, host) {
  return host === pattern.domain || (pattern.subdomains && host.endsWith(`.${pattern.domain}`));
}

// The lines of a textarea -> {patterns: [text], errors: [message]}; blank lines and # comments are skipped.
export function parseSiteList(text) {
  const patterns = [];
  const errors = [];
  for (const line of text.split(/\r?\n/)) {
    const entry = line.split("#")[0].trim();
    if (!entry) continue;
    try {
      const normalized = patternText(parsePattern(entry));
      if (!patterns.includes(normalized)) patterns.push(normalized);
    } catch (error) {
      errors.push(error.message);
    }
  }
  return { patterns, errors };
}

export async function loadSiteLists() {
  const { [STORAGE.allowSites]: allowSites = [], [STORAGE.blockSites]: blockSites = [] } =
    await chrome.storage.local.get([STORAGE.allowSites, STORAGE.blockSites]);
  return { allow: allowSites, block: blockSites };
}

export async function saveSiteLists({ allow, block }) {
  await chrome.storage.local.set({ [STORAGE.allowSites]: allow, [STORAGE.blockSites]: block });
}

// Why the agent may not work on `url` under `lists` ({allow, block}: pattern texts), or "" when it may.
export function siteRefusal(url, lists) {
  const host = hostOf(url);
  if (!host) return "";
  const parse = (texts) => texts.map((t) => parsePattern(t));
  const blocked = parse(lists.block).find((p) => matches(p, host));
  if (blocked) return `${host} is on the extension's block list (${patternText(blocked)}): Branchwise does not work there`;
  const allow = parse(lists.allow);
  if (allow.length && !allow.some((p) => matches(p, host))) {
    return `${host} is not on the extension's allow list (${lists.allow.join(", ")}): Branchwise does not work there`;
  }
  return "";
}

// Throws `site_not_allowed` when the user's lists keep Branchwise away from `url`.
export async function requireSiteAllowed(url) {
  const refusal = siteRefusal(url || "", await loadSiteLists());
  if (refusal) throw new CommandError("site_not_allowed", refusal);
}

// Why Branchwise may not open `url` in a tab (a goto, a step through the tab's history), or "" if it may: only http(s)
// pages, on sites the lists allow.
export function openRefusal(url, lists) {
  if (!/^https?:\/\//i.test(url || "")) return "only http(s) addresses are allowed";
  return siteRefusal(url, lists);
}

// What the side panel may tell the backend about a tab to ask what exploring learnt of its site: the origin only (the
// site is named by it; the path and query stay in the browser), and nothing for a page Branchwise may not work on.
export function demoOrigin(url, lists) {
  return openRefusal(url, lists) ? "" : new URL(url).origin;
}
