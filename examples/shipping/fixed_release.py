"""The fixed release: orders of 100 or more ship free."""

import json
import sys

order = json.load(sys.stdin)["input"]
fee = 0 if order["amount"] >= 100 else 10
print(json.dumps({"fee": fee}))
