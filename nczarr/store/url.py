"""netcdf-c's dataset URLs, the storage half: where a ``file:///p#mode=nczarr,file``,
``file:///p.zip#mode=zarr,zip``, ``s3://bucket/key#mode=nczarr`` or
``https://HOST/bucket/key#mode=zarr,s3&aws.profile=NAME`` keeps its keys (a local path, or an
fsspec URL with its storage options), and its mode words, which the floors above read
(:mod:`nczarr.formats.location`: the convention).

The rules are netcdf-c 4.10's (``ncuri``, ``NC_s3urlrebuild``, ``NC_iss3``): the fragment is
``key=value`` pairs joined by ``&``, ``mode`` a list of words joined by ``,`` (several ``mode``
keys add up); a URL is S3 when its scheme is ``s3`` / ``gs3``, its mode names ``s3`` / ``gs3``,
or its host is Amazon's or Google's. Any other host is an S3-compatible endpoint (MinIO, moto,
...), the first path segment the bucket. Region: from the host, else ``aws.region`` in the
fragment, else ``AWS_REGION`` / ``AWS_DEFAULT_REGION``; profile: ``aws.profile`` (or
``awsprofile``). Unlike netcdf-c, unknown mode words are refused (netcdf-c ignores them, which
hides typos), and mode words are case-insensitive.

fsspec's chained URLs (``simplecache::s3://bucket/key``, ``zip::s3://bucket/a.zip``,
``simplecache::https://HOST/bucket/key#mode=nczarr,s3``) are taken too: the last link is where
the data is, read as above (so netcdf-c's S3 forms work inside a chain), and the storage
options apply to it (fsspec would give them to the first link); options keyed by the
protocol of a link (``{"simplecache": {"cache_storage": "/tmp/c"}}``) go to that link, as in
fsspec.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from nczarr.errors import ArgumentError, StoreError

#: Mode words naming where the keys are (``file`` is a folder, the default for local paths).
STORAGE_WORDS = frozenset({"file", "zip", "s3", "gs3"})
#: Mode words naming how the dataset is stored, read by :mod:`nczarr.formats.location`.
CONVENTION_WORDS = frozenset({"nczarr", "zarr", "xarray", "noxarray", "consolidated", "v2", "v3"})
#: netcdf-c's older spellings of mode words, still taken by netcdf-c 4.9.
_OLD_WORDS = {"nzf": "file"}
#: Mode words netcdf-c takes for its own logging, which change nothing stored.
IGNORED_WORDS = frozenset({"log", "show"})
MODE_WORDS = STORAGE_WORDS | CONVENTION_WORDS | IGNORED_WORDS

#: A URL scheme before ``://`` (``s3``, ``https``, ...) or an fsspec chain's ``::``; ``file:``
#: alone also starts a URL (``file:relative/path``).
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]+)(?:://|::)")
_AWS_HOST = ".amazonaws.com"
_GOOGLE_HOST = "storage.googleapis.com"


@dataclass(frozen=True)
class StoreURL:
    """Where a dataset's keys are: ``target`` a local path (a folder, or a zip archive when
    ``zip``) when ``local``, else an fsspec URL opened with ``storage_options``; ``mode`` the
    URL's mode words (lowercase, in order; empty for a plain path or URL), ``fragment`` its
    whole fragment (what follows ``#``)."""

    target: str
    local: bool = True
    zip: bool = False
    storage_options: Mapping[str, object] = field(default_factory=dict)
    mode: tuple[str, ...] = ()
    fragment: str = ""

    @property
    def zip_folder(self) -> str | None:
        """The directory netcdf-c's zip storage (a URL naming ``zip``) roots a new archive's
        dataset in: the archive's name less one extension (``x.zip`` holds ``x/``); None
        for a plain path, whose keys go at the archive's top, where zarr-python reads them."""
        if not self.zip or "zip" not in self.mode:
            return None
        name = os.path.basename(self.target)
        return name.rpartition(".")[0] if "." in name else name or None


def has_fragment(location: str) -> bool:
    """Whether ``location`` ends in netcdf-c's fragment: any URL's ``#...``, or a ``#mode=...``
    after a plain path (netcdf-c takes fragments on URLs only; a plain ``#`` stays in a path)."""
    base, hash_, fragment = location.partition("#")
    return bool(hash_) and (_scheme(base) is not None or "mode=" in fragment)


def parse_store_url(location: str, storage_options: Mapping[str, object] | None = None) -> StoreURL:
    """Where the keys of the dataset at ``location`` are (see the module's docstring); the
    ``storage_options`` given win over those the URL implies. ArgumentError names an unknown
    mode word and the URL."""
    base, _, fragment = location.partition("#") if has_fragment(location) else (location, "", "")
    words, keys = _fragment(fragment)
    unknown = [word for word in words if word not in MODE_WORDS]
    if unknown:
        raise ArgumentError(
            f"unknown mode word{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} in {location!r}; "
            f"netcdf-c's mode words are {', '.join(sorted(MODE_WORDS))}"
        )
    if _is_chain(base):
        return _chained(base, words, keys, storage_options or {}, location, fragment)
    scheme = _scheme(base)
    options: dict[str, object] = {}
    if scheme is None:
        target = base
    elif scheme == "file":
        target = _file_path(base, location, netcdf=bool(words))
    elif scheme in ("s3", "gs3") or {"s3", "gs3"} & set(words) or _s3_host(urlsplit(base).hostname or ""):
        target, options = _s3(base, keys, google=scheme == "gs3" or "gs3" in words, location=location)
    else:
        target = base
    local = scheme in (None, "file")
    if "zip" in words and not local:
        raise ArgumentError(f"{location!r}: a zip archive (mode word 'zip') must be a local file")
    return StoreURL(
        target,
        local=local,
        zip="zip" in words or (local and target.lower().endswith(".zip")),
        storage_options=_merged(options, storage_options or {}),
        mode=tuple(words),
        fragment=fragment,
    )


def _is_chain(base: str) -> bool:
    """Whether ``base`` is an fsspec chain (``simplecache::s3://...``): a protocol then ``::``."""
    match = _SCHEME.match(base)
    return match is not None and match[0].endswith("::")


def _chained(
    base: str,
    words: list[str],
    keys: Mapping[str, str],
    given: Mapping[str, object],
    location: str,
    fragment: str,
) -> StoreURL:
    """An fsspec chain: its last link read as any URL (netcdf-c's S3 forms too), the storage
    options keyed by that link's protocol unless they name a link's protocol themselves."""
    *outer, inner = base.split("::")
    if "zip" in words:
        raise ArgumentError(f"{location!r}: a zip archive (mode word 'zip') must be a local file")
    scheme = _scheme(inner)
    implied: dict[str, object] = {}
    if scheme in ("s3", "gs3") or {"s3", "gs3"} & set(words) or _s3_host(urlsplit(inner).hostname or ""):
        inner, implied = _s3(inner, keys, google=scheme == "gs3" or "gs3" in words, location=location)
        scheme = "s3"
    elif scheme == "file":
        inner = _file_path(inner, location, netcdf=bool(words))
    protocol = scheme or "file"
    protocols = {protocol, *(link.lower() for link in outer)}
    keyed = {name: value for name, value in given.items() if name in protocols}
    own = {name: value for name, value in given.items() if name not in protocols}
    inner_given = keyed.pop(protocol, {})
    if not isinstance(inner_given, Mapping):
        raise ArgumentError(f"{location!r}: storage option {protocol!r} must be a mapping of that link's options")
    options = {**keyed, protocol: _merged(implied, {**own, **inner_given})}
    return StoreURL(
        "::".join([*outer, inner]), local=False, storage_options=options, mode=tuple(words), fragment=fragment
    )


def _scheme(location: str) -> str | None:
    match = _SCHEME.match(location)
    if match:
        return match[1].lower()
    return "file" if location[:5].lower() == "file:" else None


def _fragment(fragment: str) -> tuple[list[str], dict[str, str]]:
    """The mode words and the other keys of a URL's fragment (keys lowercase)."""
    words: list[str] = []
    keys: dict[str, str] = {}
    for item in fragment.split("&"):
        key, _, value = item.partition("=")
        key = unquote(key.strip()).lower()
        if key == "mode":
            spelled = (unquote(w).strip().lower() for w in value.split(","))
            words.extend(_OLD_WORDS.get(w, w) for w in spelled if w)
        elif key:
            keys[key] = unquote(value.strip())
    return words, keys


def _file_path(url: str, location: str, *, netcdf: bool) -> str:
    """The local path of a ``file:`` URL, percent-decoded: ``file:///abs``,
    ``file://localhost/abs``, ``file:relative``, and in a netcdf-c URL (``netcdf``: one with
    mode words) ``file://relative``, as netcdf-c's test scripts write it (netcdf-c reads all
    that follows ``file://`` as the path)."""
    parts = urlsplit(url)
    if parts.netloc in ("", "localhost"):
        return _url2pathname(parts.path)
    if netcdf:
        return _url2pathname(parts.netloc + parts.path)
    raise StoreError(f"file URL {location!r} names a host; only local file URLs are supported")


def _s3_host(host: str) -> bool:
    return host.lower().endswith(_AWS_HOST) or host.lower() == _GOOGLE_HOST


def _s3(url: str, keys: Mapping[str, str], *, google: bool, location: str) -> tuple[str, dict[str, object]]:
    """The fsspec ``s3://bucket/key`` URL and the s3fs options (endpoint, region, profile) of
    an S3 URL in any of netcdf-c's forms."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    labels = host.split(".") if host else []
    path = [unquote(segment) for segment in parts.path.split("/") if segment]
    bucket: str | None = None
    region: str | None = None
    endpoint: str | None = None
    if parts.scheme.lower() in ("s3", "gs3"):
        bucket = parts.netloc
    elif host.endswith(_AWS_HOST):
        bucket, region = _aws_host(labels, location)
    elif host == _GOOGLE_HOST:
        google = True
    else:  # an S3-compatible endpoint: https://HOST/bucket/key, or virtual-host style
        netloc = parts.netloc
        if len(labels) > 3 and labels[1] == "s3":  # https://bucket.s3.<region>.example.com/key
            bucket, region = labels[0], labels[2]
            netloc = netloc[len(bucket) + 1 :]
        elif len(labels) > 2 and labels[0] == "s3":  # https://s3.<region>.example.com/bucket/key
            region = labels[1]
        endpoint = f"{parts.scheme.lower()}://{netloc}"
    if google:
        endpoint = f"https://{_GOOGLE_HOST}"
    if bucket is None:
        if not path:
            raise ArgumentError(f"S3 URL {location!r} names no bucket")
        bucket = path.pop(0)
    options: dict[str, object] = {}
    if endpoint is not None:
        options["endpoint_url"] = endpoint
    region = region or keys.get("aws.region") or keys.get("awsregion") or _environment_region()
    if region:
        options["client_kwargs"] = {"region_name": region}
    profile = keys.get("aws.profile") or keys.get("awsprofile")
    if profile and profile != "no":  # netcdf-c's "no" profile: no credentials file
        options["profile"] = profile
    return "s3://" + "/".join([bucket, *path]), options


def _aws_host(labels: list[str], location: str) -> tuple[str | None, str | None]:
    """The bucket and region in an Amazon host name: ``s3.amazonaws.com``,
    ``s3.<region>.amazonaws.com``, ``<bucket>.s3.amazonaws.com``, ``<bucket>.s3.<region>.amazonaws.com``."""
    if len(labels) == 3:
        return None, None
    if len(labels) == 4:
        return (None, labels[1]) if labels[0] == "s3" else (labels[0], None)
    if len(labels) == 5 and labels[1] == "s3":
        return labels[0], labels[2]
    raise ArgumentError(f"{location!r}: not an Amazon S3 host netcdf-c knows (s3.<region>.amazonaws.com and the like)")


def _environment_region() -> str | None:
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or None


def _merged(implied: Mapping[str, object], given: Mapping[str, object]) -> dict[str, object]:
    """The storage options a URL implies, with those given on top (``client_kwargs`` merged)."""
    merged = {**implied, **given}
    implied_kwargs, given_kwargs = implied.get("client_kwargs"), given.get("client_kwargs")
    if isinstance(implied_kwargs, Mapping) and isinstance(given_kwargs, Mapping):
        merged["client_kwargs"] = {**implied_kwargs, **given_kwargs}
    return merged


def _url2pathname(path: str) -> str:
    """urllib.request's ``url2pathname``, imported only on Windows: on POSIX it is
    ``unquote``, and importing urllib.request (http.client, email, ssl) costs every command
    about 10 ms of start-up."""
    if os.name == "nt":
        from urllib.request import url2pathname

        return url2pathname(path)
    return unquote(path)
