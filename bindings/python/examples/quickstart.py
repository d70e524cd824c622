"""quickstart.py -- ten slow steps; kill it part-way and run it again.

    python3 quickstart.py      # Ctrl-C (or kill -9) after a few pages
    python3 quickstart.py      # fetches only the pages it had not fetched
    python3 quickstart.py      # completed: prints the journaled total at once

The journal is in ./.lil (or $LIL_DIR): `lil inspect quickstart` shows it.
"""

import time

import lil


def fetch_page(n):
    time.sleep(0.3)  # slow, costly, or not to be repeated
    print(f"  fetched page {n}", flush=True)
    return {"page": n, "words": 100 * n}


@lil.durable(goal_id="quickstart")
def crawl():
    pages = [lil.step("fetch", fetch_page, n) for n in range(1, 11)]
    return sum(p["words"] for p in pages)


if __name__ == "__main__":
    print("total words:", crawl())
