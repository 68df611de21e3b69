"""Archive copies on a dask.distributed LocalCluster whose workers hold less memory than the
archive or lose a worker to SIGKILL, and with sources and target on S3 (moto's server)."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import distributed
import netCDF4
import numpy as np
import pytest
from archive_files import dump, monthly_archive, ncrcat
from motoserver import moto_s3

import nczarr
from nczarr.convert.archive import copy_archive
from nczarr.convert.copy import CopyOptions
from nczarr.convert.executor import DaskCluster

BUCKET = "nczarr-archive"


def write_month(path: Path, month: int, days: int, size: int) -> None:
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("time", None)
        ds.createDimension("y", size)
        ds.createDimension("x", size)
        time = ds.createVariable("time", "f8", ("time",))
        time.units = f"days since 2000-{month:02d}-01"
        v = ds.createVariable("v", "f4", ("time", "y", "x"))
        time[:] = np.arange(days)
        for day in range(days):
            v[day] = np.full((size, size), month * 100 + day, "f4")


def test_local_cluster_with_workers_smaller_than_the_archive(tmp_path: Path) -> None:
    files = [tmp_path / f"m{m:02d}.nc" for m in (1, 2, 3)]
    for month, path in enumerate(files, 1):
        write_month(path, month, 20, 1024)  # 80 MiB a file, 240 MiB in all
    limit = 200 << 20
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, memory_limit=limit, processes=True)
    with cluster, distributed.Client(cluster) as client:
        executor = DaskCluster(client)
        copy_archive(files, tmp_path / "out.zarr", CopyOptions(max_memory=24 << 20), executor=executor)
        assert sum(f.stat().st_size for f in files) > limit
    with nczarr.Dataset(tmp_path / "out.zarr") as out:
        assert out["v"].shape == (60, 1024, 1024)
        assert out["v"][::7, 5, 5].tolist() == [100, 107, 114, 201, 208, 215, 302, 309, 316]
        assert out["time"][[0, 20, 40]].tolist() == [0, 31, 60]


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with moto_s3(tmp_path_factory.mktemp("aws"), {BUCKET: None}) as endpoint:
        yield endpoint


def test_sources_and_target_on_s3(tmp_path: Path, s3: str) -> None:
    files = monthly_archive(tmp_path)
    options = {"endpoint_url": s3}
    stores = []
    for path in files:  # the sources as Zarr stores on S3
        url = f"s3://{BUCKET}/src/{path.stem}.zarr"
        copy_archive([path], url, CopyOptions(storage_options=options))
        stores.append(url)
    target = f"s3://{BUCKET}/out.zarr"
    copy_archive([f"s3://{BUCKET}/src/m0*.zarr"], target, CopyOptions(storage_options=options), verify=True)
    copy_archive(files, tmp_path / "local.zarr")
    with nczarr.Dataset(target, storage_options=options) as out, nczarr.Dataset(tmp_path / "local.zarr") as local:
        assert out["time"][:].tolist() == local["time"][:].tolist()
        assert out["g"]["n"][:].tolist() == local["g"]["n"][:].tolist()


def test_netcdf_sources_on_s3(tmp_path: Path, s3: str) -> None:
    """netCDF-4 and netCDF-3 files on S3 read in place, found by a pattern."""
    import fsspec

    files = monthly_archive(tmp_path)
    options = {"endpoint_url": s3}
    fs = fsspec.filesystem("s3", **options)
    for path in files:
        fs.put_file(str(path), f"{BUCKET}/nc/{path.name}")
    target = tmp_path / "out.zarr"
    copy_archive([f"s3://{BUCKET}/nc/m*.nc"], target, CopyOptions(storage_options=options), verify=True)
    copy_archive(files, tmp_path / "local.zarr")
    with nczarr.Dataset(target) as out, nczarr.Dataset(tmp_path / "local.zarr") as local:
        assert out["time"][:].tolist() == local["time"][:].tolist()
        assert out["t"][:].tolist() == local["t"][:].tolist()


def test_a_killed_dask_worker_s_tasks_run_elsewhere(tmp_path: Path) -> None:
    """One worker process SIGKILLed after the first task is done: dask runs its tasks on
    the other (and on the one its nanny starts again); the job finishes in the same run."""
    files = monthly_archive(tmp_path, (10, 12, 9))
    expected = ncrcat(files, tmp_path / "ncrcat.nc")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    with cluster, distributed.Client(cluster) as client:
        victim = next(iter(client.run(os.getpid).values()))
        killed: list[int] = []

        def kill_once(progress: object) -> None:
            if not killed:
                os.kill(victim, signal.SIGKILL)
                killed.append(victim)

        options = CopyOptions(chunking=("time/1",), max_memory=1)  # a task a record
        copy_archive(files, tmp_path / "out.zarr", options, executor=DaskCluster(client), progress=kill_once)
    assert killed
    assert dump(tmp_path / "out.zarr") == expected
    assert not (tmp_path / "out.zarr" / ".nczarr_archive").exists()
