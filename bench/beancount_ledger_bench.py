"""beancount-ledger figures: world generation (standard, hard, keyed task data), scoring against
beancount's own load_string, and the preflight's cost per world.

    uv run python bench/beancount_ledger_bench.py

(Not named after the package: a script's own directory comes first on sys.path.)
"""

import os
import statistics
import time

from beancount import loader
from beancount_ledger import keys, preflight, render, world
from beancount_ledger.scorer import score
from beancount_ledger.taskset import data_of, golden_of, key_of, make_task_data

SECRET = b"bench secret, never released"


def median_ms(fn, repeat: int = 25) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    worlds = median_ms(lambda: [world.generate(n) for n in range(100)], 5) / 100
    files = median_ms(lambda: [render.public_files(world.generate(n)) for n in range(100)], 5) / 100
    hard = median_ms(lambda: [world.generate(n, hard=True) for n in range(100)], 5) / 100
    keyed = median_ms(lambda: [make_task_data(f"eval:{n}", SECRET) for n in range(100)], 5) / 100
    print(f"world generation: {worlds:.3f} ms per world; with the eight files: {files:.3f} ms")
    print(f"hard world generation: {hard:.3f} ms; keyed task data (HMAC seed, files, key): {keyed:.3f} ms")
    samples = {s: make_task_data(s) for s in ("bank_recon_001", "dev:1", "dev:2")}
    samples["train:1:hard"] = data_of("train:1:hard", keys.keyed_world("train:1:hard", SECRET))
    for selector, data in samples.items():
        text, key = golden_of(data), key_of(data)
        load = median_ms(lambda text=text: loader.load_string(text))
        scored = median_ms(lambda text=text, key=key: score(text, key))
        print(
            f"{selector:<15} ledger {len(text.encode()):>6} bytes  load_string {load:6.2f} ms  "
            f"score {scored:6.2f} ms  ratio {scored / load:.2f}x"
        )
    os.environ[keys.SECRET_ENV] = SECRET.decode()
    for selector in ("eval:1", "train:1:hard"):
        gate = median_ms(lambda selector=selector: preflight.mint(selector), 5)
        print(f"preflight phase 1, {selector}: {gate:.0f} ms per world (every gate, every attack)")


if __name__ == "__main__":
    main()
