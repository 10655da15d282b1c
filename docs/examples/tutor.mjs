// @ts-check — a tutor app's first integration with phc: register, propose, ask, read (Node 20+, no packages).
import { createInterface } from "node:readline/promises";

const BASE = process.env.PHC_URL ?? "http://127.0.0.1:7200";
const APP = { consumer: "tutor", secret: String(process.env.TUTOR_SECRET) }; // 16-256 bytes, yours to keep

/** @param {string} method @param {string} path @param {string} [token] @param {object} [body] */
async function call(method, path, token, body) {
  const headers = { "Content-Type": "application/json", ...(token && { Authorization: `Bearer ${token}` }) };
  const r = await fetch(BASE + path, { method, headers, body: body && JSON.stringify(body) });
  const out = await r.json();
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${out.constraint}: ${out.error}`); // {"error", "constraint"}
  return out;
}

await call("POST", "/context/consumers/register", undefined, { name: APP.consumer, secret: APP.secret });
const rl = createInterface({ input: process.stdin, output: process.stdout });
await rl.question("registered tutor: press Enter once the owner has approved it\n"); rl.close();
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
