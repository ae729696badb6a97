// The allowance of an approved action (`act {allow}`): each entry names one mutating request the user approved with
// the action (its method and URL) and lets one matching request through, then it is used up. A URL matches with the
// same scheme, host, port, path and query; the fragment is ignored (it never reaches the server). Pure: no Chrome API,
// so it can be tested on its own.

export function sameAddress(a, b) {
  let x;
  let y;
  try {
    x = new URL(a);
    y = new URL(b);
  } catch {
    return false;
  }
  // `host` leaves out a scheme's default port, so http://shop:80/ and http://shop/ match, as on the wire.
  return x.protocol === y.protocol && x.host === y.host && x.pathname === y.pathname && x.search === y.search;
}

// Same scheme, host and port: a 307/308 of a let-through request is followed without a question only within its origin.
export function sameOrigin(a, b) {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}

export function allowanceOf(entries) {
  return (entries || []).map((e) => ({ method: String(e.method).toUpperCase(), url: String(e.url), used: false }));
}

// The index of the first unused entry the request matches, or -1.
export function findEntry(allowance, method, url) {
  const wanted = method.toUpperCase();
  return allowance.findIndex((e) => !e.used && e.method === wanted && sameAddress(e.url, url));
}
