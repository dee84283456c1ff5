"""Benchmark geo-reprojection-v1: generation + key per task, scoring per reply, against bare pyproj.

The yardstick is one bare pyproj call on a single point in the same process: a prebuilt
``Transformer.transform(lon, lat)`` (and, for the geodesic families, ``Geod.inv``). Every
figure is a median over several repeats, per item, on one core:
    uv run python bench/geo.py
"""

from __future__ import annotations

from geo_reprojection_v1 import baselines, generator, grading, reference
from geo_reprojection_v1.grids import GRIDS
from geo_reprojection_v1.problem import FAMILIES
from geo_reprojection_v1.taskset import GeoConfig, make_task_data
from piv_core import task_rng
from piv_core.bench import per_item
from piv_core.policy import Conversation
from pyproj import Geod, Transformer


def main() -> None:
    names = list(GRIDS) * 50
    points = [generator.point(task_rng(0, i), name) for i, name in enumerate(names)]
    bare = {name: Transformer.from_crs(4326, grid.epsg, always_xy=True) for name, grid in GRIDS.items()}
    geod = Geod(ellps="WGS84")

    def build_and_transform(i: int) -> object:
        transformer = Transformer.from_crs(4326, GRIDS[names[i]].epsg, always_xy=True)
        return transformer.transform(*points[i])

    transform = per_item(lambda i: bare[names[i]].transform(*points[i]), len(points))
    rows = [
        ("bare pyproj `Transformer.transform`, one point, prebuilt transformer", transform),
        ("bare pyproj `Geod.inv`, one pair", per_item(lambda i: geod.inv(*points[i], *points[i - 1]), 450)),
        ("bare pyproj `Transformer.from_crs` + one transform", per_item(build_and_transform, 9, repeats=3)),
    ]
    for family in (*FAMILIES, None):
        config = GeoConfig(families=[family] if family else list(FAMILIES))
        label = family or "mixed"
        problems = [generator.generate(task_rng(config.seed, i), tuple(config.families)) for i in range(400)]
        key = per_item(lambda i, problems=problems: reference.solve(problems[i]), len(problems))
        made = per_item(lambda i, config=config: make_task_data(config, i), len(problems))
        rows += [(f"key only (`solve`), {label}", key), (f"generation + key + prompt, {label}", made)]

    config = GeoConfig()
    tasks = [make_task_data(config, i) for i in range(400)]
    for name, policy in baselines.POLICIES.items():
        replies = [policy(Conversation([{"role": "user", "content": t.prompt}], [])) for t in tasks]

        def score(i: int, replies: list[str] = replies) -> grading.Grade:
            return grading.grade(replies[i], tasks[i].family, tasks[i].key, tasks[i].tolerance)

        rows.append((f"scoring one `{name}` reply, mixed families", per_item(score, len(tasks))))

    print("| measure | per item | ratio to one bare transform |")
    print("|---|---|---|")
    for label, seconds in rows:
        print(f"| {label} | {seconds * 1e6:.2f} µs | {seconds / transform:.1f}x |")


if __name__ == "__main__":
    main()
