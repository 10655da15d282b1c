// @ts-check — a tutor app's first integration with phc: register, propose, ask, read (Node 20+, no packages).
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/** Where the person's daemon listens: PHC_URL, else PHC_ADDR (host:port), else the address the daemon writes to
 * addr in its data dir ($PHC_HOME, by default ~/.phc), else the default port. */
function phcURL() {
  if (process.env.PHC_URL) return process.env.PHC_URL;
  if (process.env.PHC_ADDR) return `http://${process.env.PHC_ADDR}`;
  try {
    return `http://${readFileSync(join(process.env.PHC_HOME || join(homedir(), ".phc"), "addr"), "utf8").trim()}`;
  } catch {
    return "http://127.0.0.1:7200";
  }
}

const BASE = phcURL();
const APP = { consumer: "tutor", secret: String(process.env.TUTOR_SECRET) }; // 16-256 bytes, yours to keep

/** @param {string} method @param {string} path @param {string} [token] @param {object} [body] */
async function call(method, path, token, body) {
  const headers = { "Content-Type": "application/json", ...(token && { Authorization: `Bearer ${token}` }) };
  const r = await fetch(BASE + path, { method, headers, body: body && JSON.stringify(body) });
  const out = await r.json();
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${out.constraint}: ${out.error}`); // {"error", "constraint"}
  return out;
}

// Registering again with the same secret answers the registration as it stands: run twice, the app goes on.
let reg = await call("POST", "/context/consumers/register", undefined, { name: APP.consumer, secret: APP.secret });
console.log("registered tutor", reg.status);
while (reg.status !== "approved") { // the owner approves: phc consumer approve tutor
  await new Promise((done) => setTimeout(done, 2000));
  reg = await call("POST", "/context/consumers/register", undefined, { name: APP.consumer, secret: APP.secret });
}
const { token } = await call("POST", "/context/tokens/service", undefined, { ...APP, scope: "learning.*", mode: "read-write", purpose: "learning" });
const prp = await call("POST", "/phc/v1/proposals", token, { key: "learning.spanish.goal", value: "Practice Spanish twice a week",
  kind: "goal", assertion: "reported", evidence: [{ ref: "chat://tutor/session/42" }] });
console.log("proposed", prp.proposal_id, prp.status);
let req = await call("POST", "/context/requests", token, { scope: "learning.*", purpose: "learning", duration: "1h" });
console.log("requested", req.request_id, req.status);
while (req.status === "pending") { // the owner decides: phc approve / phc deny
  await new Promise((done) => setTimeout(done, 2000));
  req = await call("GET", `/context/requests/${req.request_id}`, token);
}
if (req.status !== "approved") throw new Error(`request ${req.status}`);
for (const claim of (await call("GET", "/phc/v1/context?purpose=learning", req.token)).claims) console.log("claim", claim.key, "=", claim.value);
console.log("field", (await call("GET", "/context/fields/learning.spanish.goal", req.token)).value);
console.log("proposal", (await call("GET", `/phc/v1/proposals/${prp.proposal_id}`, token)).proposals[0].status);
