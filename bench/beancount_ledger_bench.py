"""beancount-ledger figures: world generation, and scoring against beancount's own load_string.

    uv run python bench/beancount_ledger_bench.py

(Not named after the package: a script's own directory comes first on sys.path.)
"""

import statistics
import time

from beancount import loader
from beancount_ledger import render, world
from beancount_ledger.scorer import score
from beancount_ledger.taskset import golden_of, key_of, make_task_data


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
    print(f"world generation: {worlds:.3f} ms per world; with the eight files: {files:.3f} ms")
    for selector in ("bank_recon_001", "dev:1", "dev:2"):
        data = make_task_data(selector)
        text, key = golden_of(data), key_of(data)
        load = median_ms(lambda text=text: loader.load_string(text))
        scored = median_ms(lambda text=text, key=key: score(text, key))
        print(
            f"{selector:<15} ledger {len(text.encode()):>6} bytes  load_string {load:6.2f} ms  "
            f"score {scored:6.2f} ms  ratio {scored / load:.2f}x"
        )


if __name__ == "__main__":
    main()
