"""The buggy release: free shipping only strictly above 100 (the boundary is wrong)."""

import json
import sys

order = json.load(sys.stdin)["input"]
fee = 0 if order["amount"] > 100 else 10
print(json.dumps({"fee": fee}))
