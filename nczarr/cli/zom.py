"""``nczarr zom``: Zarr Object Model documents (ZEP 6): export, create, check, validate."""

from __future__ import annotations

import argparse
import sys

from nczarr.cli.shared import add_storage_flags, report, storage_options


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    zom = sub.add_parser("zom", help="Zarr Object Model documents: export, create, check, validate")
    commands = zom.add_subparsers(dest="zom_command", metavar="ZOM_COMMAND", required=True)
    store_help = "a directory, .zip file or fsspec URL"

    export = commands.add_parser("export", help="print the ZOM document (JSON) of a store")
    export.add_argument("store", help=store_help)
    export.add_argument("-o", "--output", metavar="FILE", help="write the document to FILE")
    export.add_argument("--no-consolidated", action="store_true", help="read every node, not the consolidated metadata")
    add_storage_flags(export)
    export.set_defaults(run=run_export)

    create = commands.add_parser("create", help="create the groups and arrays (no data) a ZOM document describes")
    create.add_argument("doc", help="a ZOM document (JSON file)")
    create.add_argument("store", help=store_help)
    create.add_argument("--overwrite", action="store_true", help="replace what a non-empty store holds")
    create.add_argument("--no-consolidated", action="store_true", help="do not write consolidated metadata")
    add_storage_flags(create)
    create.set_defaults(run=run_create)

    check = commands.add_parser(
        "check", help="list every difference between a ZOM document and a store (exit 1 when there is one)"
    )
    check.add_argument("doc", help="a ZOM document (JSON file)")
    check.add_argument("store", help=store_help)
    add_storage_flags(check)
    check.set_defaults(run=run_check)

    validate = commands.add_parser(
        "validate", help="check a ZOM document against the JSON Schema of its Zarr version (exit 1 on problems)"
    )
    validate.add_argument("doc", help="a ZOM document (JSON file)")
    validate.set_defaults(run=run_validate)


def run_export(args: argparse.Namespace) -> int:
    from nczarr.store import open_store
    from nczarr.zarr import zom

    with open_store(args.store, mode="r", storage_options=storage_options(args)) as store:
        document = zom.export(store, use_consolidated=False if args.no_consolidated else None)
    if args.output:
        zom.write_document(document, args.output)
    else:
        sys.stdout.write(zom.dumps(document))
    return 0


def run_create(args: argparse.Namespace) -> int:
    from nczarr.store import open_store
    from nczarr.zarr import zom

    document = zom.read_document(args.doc)
    # Mode "w" replaces a Zarr dataset but refuses to wipe a directory of something else.
    with open_store(args.store, mode="w" if args.overwrite else "a", storage_options=storage_options(args)) as store:
        zom.create(document, store, consolidate=not args.no_consolidated)
    return 0


def run_check(args: argparse.Namespace) -> int:
    from nczarr.store import open_store
    from nczarr.zarr import zom

    document = zom.read_document(args.doc)
    with open_store(args.store, mode="r", storage_options=storage_options(args)) as store:
        differences = zom.compare(document, store)
    return report(differences, f"{args.store} matches {args.doc}")


def run_validate(args: argparse.Namespace) -> int:
    from nczarr.zarr import zom

    return report(zom.validate(zom.read_document(args.doc)), f"{args.doc} is a valid ZOM document")
