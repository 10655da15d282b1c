"""A tutor app's first integration with phc: register, propose, ask, read."""
import os, sys, time, requests

BASE = os.environ.get("PHC_URL", "http://127.0.0.1:7200")
APP = {"consumer": "tutor", "secret": os.environ["TUTOR_SECRET"]}  # 16-256 bytes, yours to keep

def call(method, path, token=None, **kw):
    auth = {"Authorization": f"Bearer {token}"} if token else {}
    r = requests.request(method, BASE + path, headers=auth, timeout=30, **kw)
    body = r.json()
    if r.status_code >= 400:  # every error is {"error", "constraint"}
        sys.exit(f"{method} {path}: {r.status_code} {body['constraint']}: {body['error']}")
    return body

call("POST", "/context/consumers/register", json={"name": APP["consumer"], "secret": APP["secret"]})
input("registered tutor: press Enter once the owner has approved it\n")
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
