"""A tutor app's first integration with phc: register, propose, ask, read."""
import os, sys, time, pathlib, requests

def phc_url():
    """Where the person's daemon listens: PHC_URL, else PHC_ADDR (host:port), else the address the
    daemon writes to addr in its data dir ($PHC_HOME, by default ~/.phc), else the default port."""
    if os.environ.get("PHC_URL"):
        return os.environ["PHC_URL"]
    if os.environ.get("PHC_ADDR"):
        return "http://" + os.environ["PHC_ADDR"]
    try:
        home = pathlib.Path(os.environ.get("PHC_HOME") or pathlib.Path.home() / ".phc")
        return "http://" + (home / "addr").read_text().strip()
    except OSError:
        return "http://127.0.0.1:7200"

BASE = phc_url()
APP = {"consumer": "tutor", "secret": os.environ["TUTOR_SECRET"]}  # 16-256 bytes, yours to keep

def call(method, path, token=None, **kw):
    auth = {"Authorization": f"Bearer {token}"} if token else {}
    r = requests.request(method, BASE + path, headers=auth, timeout=30, **kw)
    body = r.json()
    if r.status_code >= 400:  # every error is {"error", "constraint"}
        sys.exit(f"{method} {path}: {r.status_code} {body['constraint']}: {body['error']}")
    return body

# Registering again with the same secret answers the registration as it stands: run twice, the app goes on.
reg = call("POST", "/context/consumers/register", json={"name": APP["consumer"], "secret": APP["secret"]})
print("registered tutor", reg["status"], flush=True)
while reg["status"] != "approved":  # the owner approves: phc consumer approve tutor
    time.sleep(2)
    reg = call("POST", "/context/consumers/register", json={"name": APP["consumer"], "secret": APP["secret"]})
tok = call("POST", "/context/tokens/service", json={**APP, "scope": "learning.*", "mode": "read-write", "purpose": "learning"})["token"]
prp = call("POST", "/phc/v1/proposals", tok, json={"key": "learning.spanish.goal", "value": "Practice Spanish twice a week",
           "kind": "goal", "assertion": "reported", "evidence": [{"ref": "chat://tutor/session/42"}]})
print("proposed", prp["proposal_id"], prp["status"])
req = call("POST", "/context/requests", tok, json={"scope": "learning.*", "purpose": "learning", "duration": "1h"})
print("requested", req["request_id"], req["status"], flush=True)
while req["status"] == "pending":  # the owner decides: phc approve / phc deny
    time.sleep(2)
    req = call("GET", f"/context/requests/{req['request_id']}", tok)
if req["status"] != "approved":
    sys.exit(f"request {req['status']}")
for claim in call("GET", "/phc/v1/context", req["token"], params={"purpose": "learning"})["claims"]:
    print("claim", claim["key"], "=", claim["value"])
print("field", call("GET", "/context/fields/learning.spanish.goal", req["token"])["value"])
print("proposal", call("GET", f"/phc/v1/proposals/{prp['proposal_id']}", tok)["proposals"][0]["status"])
