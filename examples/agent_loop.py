"""A multi-turn tool loop on a referee session, then a reward for where it ended.

The "policy" here is a stand-in: it proposes Python tool calls one turn at a time and
reads each observation (a real rollout would ask the model, e.g. through vLLM's
OpenAI-compatible server, with the observation appended to the conversation). Every
call runs in one sandboxed interpreter that keeps its state between turns; when the
episode ends, the session's files are judged by a checker in a fresh sandbox
(``params.session`` with the ``state`` verifier) and the session is closed.

    referee serve &
    python examples/agent_loop.py --server http://127.0.0.1:8000
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Generator

from referee.service.client import Client
from referee.verifiers.types import Item

TASK = "Write the first 10 primes, comma-separated, to answer.txt."
CHECK = """
import sys
wanted = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29]
try:
    got = [int(x) for x in open("answer.txt").read().strip().split(",")]
except (OSError, ValueError):
    sys.exit(1)
sys.exit(0 if got == wanted else 1)
"""


def policy(task: str) -> Generator[str, str, None]:
    """Tool calls, one per turn; ``send`` the observation of each into the next."""
    observation = yield "def is_prime(n):\n    return n > 1 and all(n % d for d in range(2, n))"
    observation = yield "primes = [n for n in range(2, 100) if is_prime(n)][:10]\nprimes"
    if "29" in observation:  # it read its own result before committing to it
        yield "open('answer.txt', 'w').write(','.join(map(str, primes)))"


def episode(client: Client) -> float | None:
    """Run one episode; its reward (None when it could not be scored)."""
    with client.session("python", ttl_s=600) as session:
        turns = policy(TASK)
        call = next(turns)
        while True:
            outcome = session.run(call, timeout_s=10)
            shown = outcome.display[0]["text/plain"] if outcome.display else ""
            observation = outcome.stdout + shown + (outcome.error.evalue if outcome.error else "")
            print(json.dumps({"call": call, "status": outcome.status, "observation": observation}))
            try:
                call = turns.send(observation)
            except StopIteration:
                break
        params = {"session": session.id, "close_session": True}
        [result] = client.score(
            [Item(verifier="state", response="", reference=CHECK, params=params)]
        )
    print(json.dumps({"status": result.status.value, "reward": result.reward}))
    return result.reward


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default="http://127.0.0.1:8000")
    parser.add_argument("--api-key", default=None)
    args = parser.parse_args()
    with Client(args.server, api_key=args.api_key) as client:
        episode(client)


if __name__ == "__main__":
    main()
