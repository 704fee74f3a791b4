"""`plan catalog import`: gpuhunt and SkyPilot price lists read as gpuplan catalogs.

The fixtures (tests/data/import/) are small files in each format's published columns:
gpuhunt's per-provider CSVs (`aws.csv`, here also zipped as gpuhunt ships its catalog, and
`gpuhunt/gcp.csv`) and SkyPilot's `vms.csv` for AWS and GCP (`skypilot/<cloud>/vms.csv`),
each with the awkward rows real files have. Prices are examples, not quotes."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from planner.catalog_import import by_name_alone, card_for, import_catalog, read_rows
from planner.domain.load import load_catalogs
from tests.conftest import REPO

DATA = REPO / "tests" / "data" / "import"
AWS_VMS = DATA / "skypilot" / "aws" / "vms.csv"
GCP_VMS = DATA / "skypilot" / "gcp" / "vms.csv"
DATE = ("--date", "2026-09-14")


def _skipped(result: Any) -> dict[int, str]:
    """The rows not imported, by line, with the reason."""
    return {int(row.where.split(":")[1].split()[0]): why for row, why in result.skipped}


def _gpuhunt_zip(tmp_path: Path, version: str | None = "20260914") -> Path:
    """aws.csv zipped as gpuhunt publishes its catalog, with the `version` member that
    dates it (the day it was collected)."""
    path = tmp_path / "catalog.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.write(DATA / "aws.csv", "aws.csv")
        if version is not None:
            z.writestr("version", version + "\n")
    return path


def test_gpu_names_map_to_cards_by_name_and_memory() -> None:
    assert card_for("A100", 40) == "a100-40g" and card_for("A100", 80) == "a100-80g"
    assert card_for("A100-80GB", None) == "a100-80g"
    assert card_for("NVIDIA H100", 80) == "h100-80g"
    assert card_for("L4", 24) == "l4" and card_for("T4", None) == "t4"
    assert card_for("T4g", 16) == "t4" and card_for("V100-32GB", None) == "v100-32g"
    assert card_for("MI300X", 192) is None  # no spec for AMD's Infinity Fabric cards yet


def test_a_gpuhunt_zip_imports_to_a_catalog_that_loads(cli: Any, tmp_path: Path) -> None:
    out = tmp_path / "aws.yaml"
    result = cli("catalog", "import", "gpuhunt", _gpuhunt_zip(tmp_path), "--out", out)
    assert result.exit_code == 0, result.output
    catalog = yaml.safe_load(out.read_text())
    offers = {o["id"]: o for o in catalog["offers"]}
    # on-demand and spot rows of one instance merge into one offer of 8-card units
    p4d = offers["aws-p4d-24xlarge-us-east-1"]
    assert (p4d["card"], p4d["unit_cards"]) == ("a100-40g", 8)
    assert p4d["hourly"]["price"] == 32.7726 and p4d["spot"]["price"] == 11.5722
    assert set(p4d["spot"]["assumed"]) >= {"preemptions_per_hour", "restart_minutes"}
    assert {o["card"] for o in offers.values()} == {"a100-40g", "a10g", "h100-80g", "l4"}
    # cards the shipped specs lack travel inside the catalog, with their sources
    assert {c["id"] for c in catalog["cards"]} == {"a10g", "l4"}
    assert all("source" in c["bf16_tflops"] for c in catalog["cards"])
    # nothing is dropped silently: the CPU-only and the unmapped rows are listed
    text = " ".join(result.output.split())
    assert "2 rows not imported" in text
    assert "m5.large (0 × ): no GPU" in text
    assert "p5e.48xlarge (8 × MI300X): no card spec for GPU 'MI300X'" in text
    catalogs, cards = load_catalogs([out])
    assert catalogs[0].currency == "USD" and "l4" in cards


def test_every_priced_gpu_row_of_skypilot_aws_becomes_an_offer() -> None:
    """SkyPilot's AWS `vms.csv` (its columns in another order, GpuInfo a Python literal):
    each priced row with whole GPUs is an offer of its own zone, spot where SpotPrice is
    set; the rest are listed with the reason."""
    rows = read_rows("skypilot", [AWS_VMS])
    result = import_catalog(rows, "aws", "USD", "tests")
    offers = {o["id"]: o for o in result.catalog["offers"]}
    assert len(rows) == 13 and len(offers) == 9
    assert _skipped(result) == {
        11: "a fraction of a GPU (0.125)",
        12: "no card spec for GPU 'Inferentia2'",
        13: "no GPU",
        14: "no price",
    }
    az2, az4 = offers["aws-p4d-24xlarge-use1-az2"], offers["aws-p4d-24xlarge-use1-az4"]
    assert (az2["card"], az2["unit_cards"], az2["region"]) == ("a100-40g", 8, "us-east-1")
    assert (az2["hourly"]["price"], az2["spot"]["price"]) == (32.7726, 11.5722)
    assert az4["spot"]["price"] == 12.0311
    assert offers["aws-p4de-24xlarge-use1-az6"]["card"] == "a100-80g"
    assert "spot" not in offers["aws-g4dn-xlarge-use1-az3"]
    assert {o["card"] for o in offers.values()} == {
        "a100-40g",
        "a100-80g",
        "h100-80g",
        "a10g",
        "l4",
        "t4",
        "v100-16g",
    }


def test_skypilot_gcp_gpus_are_priced_with_the_vm_they_come_in() -> None:
    """SkyPilot's GCP `vms.csv` prices GPUs (rows without an InstanceType) apart from
    their VM, as GCP bills them: an offer is the GPUs' row plus the VM's row of that zone
    (A100 × 8: 23.471264 + 5.91582 = 29.387084 an hour). GPUs that attach to a VM of the
    user's choice are offers at the GPUs' price alone, that price marked assumed and the
    notes saying the VM is not in it; a VM the file does not price in that zone, a
    repeated row, TPUs and zones without a price are listed with the reason."""
    rows = read_rows("skypilot", [GCP_VMS])
    result = import_catalog(rows, "gcp", "USD", "tests")
    offers = {o["id"]: o for o in result.catalog["offers"]}
    assert len(rows) == 17 and len(offers) == 6
    t4 = offers.pop("gcp-t4-x1-us-central1-a")
    assert t4["card"] == "t4" and "price" in t4["hourly"]["assumed"]
    assert "the VM they attach to is not included" in t4["notes"]
    prices = {
        i: (o["card"], o["unit_cards"], o["hourly"]["price"], o["spot"]["price"])
        for i, o in offers.items()
    }
    assert prices == {
        "gcp-a2-highgpu-1g-us-central1-a": ("a100-40g", 1, 3.673388, 1.17594),
        "gcp-a2-highgpu-8g-us-central1-a": ("a100-40g", 8, 29.387084, 9.40748),
        "gcp-a2-ultragpu-8g-us-central1-a": ("a100-80g", 8, 23.56656, 16.08824),
        "gcp-a3-highgpu-8g-us-central1-a": ("h100-80g", 8, 46.02079, 20.19947),
        "gcp-g2-standard-4-us-central1-a": ("l4", 1, 0.70679, 0.28234),
    }
    assert "line 3" in offers["gcp-a2-highgpu-8g-us-central1-a"]["notes"]  # the VM's row
    assert _skipped(result) == {
        # the VMs alone: priced into the offers of their GPUs' rows, or of no GPU at all
        **{
            vm: f"a VM alone: priced into the GPUs of line {gpus}"
            for vm, gpus in ((2, 8), (3, 9), (4, 12), (5, 13), (6, 15))
        },
        7: "no GPU",
        10: f"repeats {GCP_VMS}:9 with its VM's line 3",
        11: "no row prices its VM a2-highgpu-8g in us-central1-b",
        14: "no price",
        17: "no price",
        18: "no card spec for GPU 'tpu-v5litepod-1'",
    }


def test_every_priced_gpu_row_of_a_gpuhunt_csv_becomes_an_offer() -> None:
    """gpuhunt's GCP CSV: on-demand and spot rows of one instance merge; the same
    instance with two T4s instead of one is an offer of its own (`-2`), never written over;
    gpu_memory picks the A100's variant."""
    rows = read_rows("gpuhunt", [DATA / "gpuhunt" / "gcp.csv"])
    result = import_catalog(rows, "gcp", "USD", "tests")
    offers = {o["id"]: o for o in result.catalog["offers"]}
    assert len(rows) == 16 and len(offers) == 7
    assert _skipped(result) == {
        7: "no price",
        15: "no card spec for GPU 'B200' (the cards of names nearest it: h200-141g, b300-288g, "
        "l20)",
        16: "no GPU",
        17: "no card spec for GPU 'v5litepod'",
    }
    one, two = offers["gcp-n1-standard-4-us-central1"], offers["gcp-n1-standard-4-us-central1-2"]
    assert (one["unit_cards"], one["hourly"]["price"], one["spot"]["price"]) == (1, 0.54, 0.1475)
    assert (two["unit_cards"], two["hourly"]["price"], two["spot"]["price"]) == (2, 0.89, 0.2583)
    assert offers["gcp-a2-ultragpu-1g-us-central1"]["card"] == "a100-80g"
    assert offers["gcp-a2-highgpu-1g-us-central1"]["card"] == "a100-40g"
    assert "spot" not in offers["gcp-a3-highgpu-8g-us-central1"]


def test_gpu_info_picks_the_card_variant_and_is_never_run(tmp_path: Path) -> None:
    """GpuInfo's memory tells an A100 of 80 GB from one of 40; it is read as a literal:
    one that is cut short, or code, is ignored (the name alone decides) and never run."""
    path = tmp_path / "aws" / "vms.csv"
    path.parent.mkdir()
    info = "{'Gpus': [{'Name': 'A100', 'Count': 8, 'MemoryInfo': {'SizeInMiB': %d}}]}"
    path.write_text(
        "InstanceType,AcceleratorName,AcceleratorCount,Price,Region,GpuInfo\n"
        f'big,A100,8.0,40,r,"{info % 81920}"\n'
        f'small,A100,8.0,30,r,"{info % 40960}"\n'
        "cut,A100,8,30,r,\"{'Gpus': [{'MemoryInfo'\"\n"
        f"code,A100,8,30,r,\"{{'Gpus': __import__('os').remove('{tmp_path}/aws/vms.csv')}}\"\n"
    )
    result = import_catalog(read_rows("skypilot", [path]), "x", "USD", "tests")
    cards = {o["id"]: o["card"] for o in result.catalog["offers"]}
    assert cards == {
        "aws-big-r": "a100-80g",
        "aws-small-r": "a100-40g",
        "aws-cut-r": "a100-40g",
        "aws-code-r": "a100-40g",
    }
    assert path.exists()


def _prices(tmp_path: Path, *lines: str) -> Path:
    """A plain CSV price list of these lines under its header (line 1)."""
    path = tmp_path / "prices.csv"
    header = "provider,instance,region,gpu_name,gpu_count,gpu_memory_gb,price"
    path.write_text("\n".join([header, *lines]) + "\n")
    return path


def _imported(cli: Any, path: Path) -> tuple[str, dict[str, dict[str, Any]]]:
    """`plan catalog import csv PATH` into acme.yaml beside it, which must succeed: what it
    said (whitespace as one space) and the offers written, by id."""
    out = path.parent / "acme.yaml"
    result = cli("catalog", "import", "csv", path, "--out", out, *DATE)
    assert result.exit_code == 0, result.output
    offers = {o["id"]: o for o in yaml.safe_load(out.read_text())["offers"]}
    return " ".join(result.output.split()), offers


def test_every_bad_number_is_refused_at_its_line_at_once(cli: Any, tmp_path: Path) -> None:
    # the lines as the file has them: a blank line and a quoted newline count
    path = _prices(tmp_path, "acme,a,us,A100,1,80,2.0", "", 'acme,"b\nc",us,A100,1,80,abc',
                   "acme,d,us,A100,1,80,-1")  # fmt: skip
    result = cli("catalog", "import", "csv", path, "--out", tmp_path / "x.yaml", *DATE)
    assert result.exit_code == 1
    text = " ".join(result.output.split())
    assert f"{path}:5: price: expected a number of at least 0, got 'abc'" in text
    assert f"{path}:6: price: expected a number of at least 0, got '-1'" in text
    assert not (tmp_path / "x.yaml").exists()


def test_a_row_is_mapped_only_to_a_card_of_its_memory(cli: Any, tmp_path: Path) -> None:
    # an A100 of 48 GB or an H100 of 94 GB is no shipped card: listed, not mapped to another
    # memory; an A100 without a memory takes the name's default card and says so; rows with
    # too few or too many cells are listed as such (lines after a blank line stay right)
    path = _prices(
        tmp_path,
        "acme,a1,us,A100,1,,2.0",
        "",
        "acme,a2,us,A100,1,48,2.0",
        "acme,h1,us,H100,1,94,3",
        "acme,short,us,A100",
        "acme,long,us,A100,1,80,2.0,extra",
        "acme,ok,us,A100,1,80,2.0",
    )
    text, offers = _imported(cli, path)
    assert (
        f"{path}:4: a2 (1 × A100): no card spec for GPU 'A100' of 48 GB (it is known as "
        "40 GB or 80 GB)" in text
    )
    assert f"{path}:5: h1 (1 × H100): no card spec for GPU 'H100' of 94 GB" in text
    assert f"{path}:6: short (0 × A100): 4 cells where the header has 7" in text
    assert f"{path}:7: long (1 × A100): 8 cells where the header has 7" in text
    assert f"{path}:2: a1 (A100, no memory given): a100-40g, as its notes say" in text
    assert {i: o["card"] for i, o in offers.items()} == {
        "acme-a1-us": "a100-40g", "acme-ok-us": "a100-80g"
    }  # fmt: skip
    assert "card assumed a100-40g" in offers["acme-a1-us"]["notes"]


def test_a_memory_is_checked_against_every_card_of_the_name(cli: Any, tmp_path: Path) -> None:
    """A name of one shipped card is not mapped whatever its memory: an H20 of 141 GB, an
    H200 of 80 or an L4 of 48 is listed; an RTX 4090 of 48 GB is its 48 GB card. The memory
    is taken in whole GB, as marketed or as software reports it (GiB)."""
    assert card_for("RTX 4090", 48) == "rtx4090-48g" and card_for("RTX 4090", 24) == "rtx4090"
    assert card_for("L4", 48) is None and card_for("H200", 80) is None
    assert card_for("L40S", 44.99) == "l40s" and card_for("T4", 15) == "t4"
    path = _prices(
        tmp_path,
        "acme,g48,cn,RTX 4090,1,48,1.57",
        "acme,g24,cn,RTX 4090,1,24,1.2",
        "acme,h20,cn,H20,8,141,60",
        "acme,h200,cn,H200,1,80,3.5",
        "acme,l4,cn,L4,1,48,0.5",
    )
    text, offers = _imported(cli, path)
    known = "(it is known as 96 GB)"
    assert f"{path}:4: h20 (8 × H20): no card spec for GPU 'H20' of 141 GB {known}" in text
    assert f"{path}:5: h200 (1 × H200): no card spec for GPU 'H200' of 80 GB" in text
    assert f"{path}:6: l4 (1 × L4): no card spec for GPU 'L4' of 48 GB" in text
    cards = {i: o["card"] for i, o in offers.items()}
    assert cards == {"acme-g48-cn": "rtx4090-48g", "acme-g24-cn": "rtx4090"}


def test_every_shipped_card_is_found_by_its_name(cli: Any, tmp_path: Path) -> None:
    """Names map to every shipped card, vendor words, spaces, dashes and case aside; a name
    that maps to none is listed with the cards whose names are nearest it."""
    assert card_for("Ascend 910B", 64) == "ascend-910b" and card_for("B300", None) == "b300-288g"
    assert card_for("RTX4090-48G", 48) == "rtx4090-48g"
    assert card_for("NVIDIA GeForce RTX 4090", 24) == "rtx4090"
    assert card_for("RTX4090-48G", 24) is None  # the name says 48: its memory must agree
    path = _prices(
        tmp_path,
        "acme,910b,cn,Ascend 910B,8,64,50",
        "acme,b300,us,B300,8,,90",
        "acme,g48,cn,RTX4090-48G,1,48,1.57",
        "acme,g24,cn,NVIDIA GeForce RTX 4090,1,24,1.2",
        "acme,h800,cn,H800,8,80,80",
    )
    text, offers = _imported(cli, path)
    assert {i: o["card"] for i, o in offers.items()} == {
        "acme-910b-cn": "ascend-910b",
        "acme-b300-us": "b300-288g",
        "acme-g48-cn": "rtx4090-48g",
        "acme-g24-cn": "rtx4090",
    }
    assert "1 rows not imported" in text
    assert (
        f"{path}:6: h800 (8 × H800): no card spec for GPU 'H800' (the cards of names nearest "
        "it: h200-141g, h100-80g, a800-80g)" in text
    )


def test_a_catalog_that_does_not_load_leaves_out_as_it_was(cli: Any, tmp_path: Path) -> None:
    """The catalog is checked before --out is touched: an existing --out is kept, nothing
    is left beside it, and the problem is named at the row it came from."""
    path = _prices(tmp_path, "acme,huge,r1,L20,20000,48,1.5", "acme,ok,r1,L20,1,48,1.5")
    out = tmp_path / "existing.yaml"
    out.write_text("keep\n")
    result = cli("catalog", "import", "csv", path, "--out", out, *DATE)
    assert result.exit_code == 1
    text = " ".join(result.output.split())
    assert f"{path}:2: huge (20000 × L20), as offer acme-huge-r1: unit_cards: 20,000 cards" in text
    assert "existing.yaml" not in text
    assert out.read_text() == "keep\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["existing.yaml", "prices.csv"]
    path = _prices(tmp_path, "acme,ok,r1,L20,1,48,1.5")  # one that loads replaces it
    assert cli("catalog", "import", "csv", path, "--out", out, *DATE).exit_code == 0
    assert yaml.safe_load(out.read_text())["offers"][0]["id"] == "acme-ok-r1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["existing.yaml", "prices.csv"]


def test_an_empty_file_or_one_without_rows_is_named_as_such(cli: Any, tmp_path: Path) -> None:
    """An empty file (a byte-order mark alone counts) is refused at that file, beside every
    other file's problems; a header without rows adds none, and is named where no file has
    a row. --out is never the place of the problem."""
    header = "provider,instance,region,gpu_name,gpu_count,gpu_memory_gb,price\n"
    empty, bom, bare = tmp_path / "empty.csv", tmp_path / "bom.csv", tmp_path / "bare.csv"
    empty.write_text("")
    bom.write_text("\ufeff")
    bare.write_text(header + "\n")
    good = _prices(tmp_path, "acme,ok,r1,L20,1,48,1.5")
    bad = tmp_path / "bad.csv"
    bad.write_text(header + "acme,b,r1,L20,1,48,abc\n")
    out = tmp_path / "out.yaml"

    def refused(*files: Path) -> str:
        result = cli("catalog", "import", "csv", *files, "--out", out, *DATE)
        assert result.exit_code == 1 and not out.exists()
        return " ".join(result.output.split())

    assert f"{empty}: empty" in refused(empty) and f"{bom}: empty" in refused(bom)
    text = refused(empty, bad, good)
    assert f"{empty}: empty" in text and f"{bad}:2: price" in text
    assert "not a csv file" not in text
    text = refused(bare)
    assert f"{bare}: a header and no rows" in text and str(out) not in text
    beside = cli("catalog", "import", "csv", bare, good, "--out", out, *DATE)
    assert beside.exit_code == 0
    said = " ".join(beside.output.split())
    assert f"{bare}: a header and no rows; nothing imported from it" in said
    assert str(good) not in said.split("wrote")[0]  # the file with a row is not named
    # every row read and none an offer: said of the files read, not of --out
    out.unlink()
    unknown = tmp_path / "unknown.csv"
    unknown.write_text(header + "acme,x,r1,Z9000,1,48,1.5\n")
    text = refused(unknown)
    assert f"{unknown}: no row could be made an offer" in text and f"{out}:" not in text


def test_gcp_vm_rows_are_read_from_a_folder_with_a_space(tmp_path: Path) -> None:
    folder = tmp_path / "my prices" / "gcp"
    folder.mkdir(parents=True)
    (folder / "vms.csv").write_text(GCP_VMS.read_text())
    spaced = import_catalog(read_rows("skypilot", [folder / "vms.csv"]), "gcp", "USD", "tests")
    plain = import_catalog(read_rows("skypilot", [GCP_VMS]), "gcp", "USD", "tests")
    assert _skipped(spaced)[2] == _skipped(plain)[2] == "a VM alone: priced into the GPUs of line 8"


def test_a_name_of_one_memory_is_not_said_to_be_assumed(tmp_path: Path) -> None:
    path = _prices(tmp_path, "acme,h,us,H100,1,,3")
    result = import_catalog(read_rows("csv", [path]), "acme", "USD", "tests")
    [offer] = result.catalog["offers"]
    assert offer["card"] == "h100-80g" and "assumed" not in offer["notes"]
    assert result.assumed == []


def test_filters_say_what_they_left_out(cli: Any, tmp_path: Path) -> None:
    out = tmp_path / "aws.yaml"
    result = cli(
        "catalog", "import", "skypilot", AWS_VMS, GCP_VMS, "--out", out, "--provider", "gcp",
        *DATE,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "rows left out as not of provider 'gcp' (the files hold providers aws, gcp;" in text
    none = cli("catalog", "import", "skypilot", AWS_VMS, "--out", out, "--provider", "GCP", *DATE)
    assert none.exit_code == 1
    assert "--provider: no row is of provider 'GCP'" in " ".join(none.output.split())


def test_the_flags_that_shape_the_file_are_checked_first(cli: Any, tmp_path: Path) -> None:
    copy = tmp_path / "vms.csv"
    copy.write_text(AWS_VMS.read_text())
    for flags, message in (
        (["--out", tmp_path / "none" / "x.yaml"], "--out: folder"),
        (["--out", copy], f"--out: {copy} is a file being imported"),
        (["--out", tmp_path / "x.yaml", "--currency", "usd"], "--currency: unknown currency 'usd'"),
        (["--out", tmp_path / "x.yaml", "--name", "!!"], "--name: expected lowercase letters"),
        (["--out", tmp_path / "My Prices.yaml"], "--name: the catalog's name would be --out's"),
    ):
        result = cli("catalog", "import", "skypilot", copy, *flags, *DATE)
        assert result.exit_code == 1, result.output
        assert message in " ".join(result.output.split())
        assert "Traceback" not in result.output
    assert copy.read_text() == AWS_VMS.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["vms.csv"]


def test_a_bad_number_is_refused_at_its_line(cli: Any, tmp_path: Path) -> None:
    path = tmp_path / "vms.csv"
    for price, message in (
        ("nan", "Price: expected a number of at least 0, got 'nan'"),
        ("-1", "Price: expected a number of at least 0, got '-1'"),
        ("1e30", "Price: '1e30' is over the most a price may be"),
    ):
        path.write_text(
            "InstanceType,AcceleratorName,AcceleratorCount,Price,Region\n"
            "g5.xlarge,A10G,1.0,1.006,us-east-1\n"
            f"g6.xlarge,L4,1.0,{price},us-east-1\n"
        )
        out = tmp_path / "x.yaml"
        result = cli("catalog", "import", "skypilot", path, "--out", out, *DATE)
        assert result.exit_code == 1 and "Traceback" not in result.output
        assert f"{path}:3: {message}" in " ".join(result.output.split())


def test_the_cli_lists_each_row_it_leaves_out(cli: Any, tmp_path: Path) -> None:
    out = tmp_path / "aws.yaml"
    result = cli("catalog", "import", "skypilot", AWS_VMS, GCP_VMS, "--out", out, *DATE)
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert f"wrote {out}: 15 offers from 30 rows" in text
    assert "15 rows not imported" in text
    assert "vms.csv:11: g6f.large (0.125 × L4): a fraction of a GPU (0.125)" in text
    catalog = yaml.safe_load(out.read_text())
    assert catalog["source"].endswith("skypilot files: aws/vms.csv, gcp/vms.csv")
    region = tmp_path / "central.yaml"
    only = cli(
        "catalog", "import", "skypilot", GCP_VMS, "--out", region, "--region", "us-east5", *DATE
    )
    assert only.exit_code == 1  # its one GPU row has no price
    assert "no row could be made an offer" in " ".join(only.output.split())


def test_the_date_comes_from_the_data_or_from_date(cli: Any, tmp_path: Path) -> None:
    """A gpuhunt zip is dated by its `version` (the oldest of several files); a file
    without a date needs --date, which also overrides the data's. Never the file's
    modification time."""
    out = tmp_path / "aws.yaml"
    assert cli("catalog", "import", "gpuhunt", _gpuhunt_zip(tmp_path), "--out", out).exit_code == 0
    assert yaml.safe_load(out.read_text())["date"] == "2026-09-14"
    older = tmp_path / "older"
    older.mkdir()
    both = [_gpuhunt_zip(tmp_path), _gpuhunt_zip(older, "20260801-17")]
    assert cli("catalog", "import", "gpuhunt", *both, "--out", out).exit_code == 0
    assert yaml.safe_load(out.read_text())["date"] == "2026-08-01"
    dated = cli("catalog", "import", "gpuhunt", both[0], "--out", out, "--date", "2026-09-20")
    assert dated.exit_code == 0 and yaml.safe_load(out.read_text())["date"] == "2026-09-20"
    undated = [
        ("skypilot", [AWS_VMS]),
        ("gpuhunt", [DATA / "aws.csv", both[0]]),  # one of them dated
        ("gpuhunt", [_gpuhunt_zip(tmp_path, None)]),
    ]
    for fmt, files in undated:
        result = cli("catalog", "import", fmt, *files, "--out", tmp_path / "x.yaml")
        assert result.exit_code == 1 and "Traceback" not in result.output
        assert (
            "--date: the files give no date: state the prices' date as --date YYYY-MM-DD"
            in " ".join(result.output.split())
        )
    assert not (tmp_path / "x.yaml").exists()
    bad = cli("catalog", "import", "skypilot", AWS_VMS, "--out", out, "--date", "14/09/2026")
    assert bad.exit_code == 1
    assert "--date: expected the prices' date as YYYY-MM-DD, got '14/09/2026'" in bad.output
    broken = cli("catalog", "import", "gpuhunt", _gpuhunt_zip(tmp_path, "latest"), "--out", out)
    assert broken.exit_code == 1
    assert "catalog.zip:version: expected the catalog's date as YYYYMMDD" in broken.output


def test_an_imported_catalog_plans_a_quarter_in_its_currency(
    cli: Any, tmp_path: Path, write: Any
) -> None:
    from tests.planning import job

    out = tmp_path / "aws.yaml"
    assert cli("catalog", "import", "gpuhunt", DATA / "aws.csv", "--out", out, *DATE).exit_code == 0
    scenario = {
        "name": "usd",
        "currency": "USD",
        "timezone": "UTC",
        "horizon": {"start": "2026-07-01", "end": "2026-07-11"},
        "catalog": str(out),
        "workloads": [job("tune", 20, measured={"card": "a10g", "cards": 1, "tokens_per_s": 500})],
    }
    path = write(scenario)
    plan_path = tmp_path / "plan.json"
    result = cli("solve", path, "--workers", "1", "--deterministic", "--json", plan_path)
    assert result.exit_code == 0, result.output
    checked = cli("check", path, plan_path)
    assert checked.exit_code == 0, checked.output


def test_a_file_of_another_format_is_refused_by_name(cli: Any, tmp_path: Path) -> None:
    out = tmp_path / "x.yaml"
    result = cli("catalog", "import", "skypilot", DATA / "aws.csv", "--out", out, *DATE)
    assert result.exit_code != 0
    assert "not a skypilot file: no column InstanceType" in " ".join(result.output.split())


def _mixed(out: Path, rate: dict[str, Any] | None) -> dict[str, Any]:
    """The seeds' catalog (CNY) and an imported AWS list (USD), one job that runs on
    either."""
    from tests.planning import job

    scenario: dict[str, Any] = {
        "name": "two-currencies",
        "currency": "CNY",
        "timezone": "Asia/Shanghai",
        "horizon": {"start": "2026-10-01", "end": "2026-10-11"},
        "catalog": ["jizhisuan-2026-09", str(out)],
        "workloads": [job("tune", 20, measured={"card": "a10g", "cards": 1, "tokens_per_s": 500})],
    }
    if rate is not None:
        scenario["exchange_rates"] = {"USD": rate}
    return scenario


def test_a_usd_catalog_beside_the_seeds_plans_at_the_stated_rate(
    cli: Any, tmp_path: Path, write: Any
) -> None:
    """Offers from the seeds' CNY catalog and an imported USD one in one scenario: the USD
    prices are converted at the stated rate (g5.xlarge: 1.006 × 7.1 = 7.1426 CNY/h), the
    plan is in CNY, checks, and lists the rate among the figures it rests on."""
    from planner.domain.load import load_scenario

    out = tmp_path / "aws.yaml"
    assert cli("catalog", "import", "gpuhunt", DATA / "aws.csv", "--out", out, *DATE).exit_code == 0
    rate = {"rate": 7.1, "date": "2026-09-30", "source": "an example rate"}
    path = write(_mixed(out, rate))
    scenario = load_scenario(path)
    g5 = scenario.offers["aws-g5-xlarge-us-east-1"]
    assert g5.hourly is not None and str(g5.hourly.price) == "7.1426"
    assert g5.spot is not None and str(g5.spot.price) == "2.14278"
    plan_path = tmp_path / "plan.json"
    result = cli("solve", path, "--workers", "1", "--deterministic", "--json", plan_path)
    assert result.exit_code == 0, result.output
    plan = yaml.safe_load(plan_path.read_text())
    assert plan["currency"] == "CNY"
    assert any(
        "converted from USD at 7.1 CNY per USD (rate of 2026-09-30" in a
        for a in plan["assumptions"]
    )
    assert cli("check", path, plan_path).exit_code == 0


def test_validate_labels_each_catalog_with_its_own_currency(
    cli: Any, tmp_path: Path, write: Any
) -> None:
    """A CNY scenario with the seeds' CNY catalog and an imported USD one: validate names
    the USD catalog's own currency and the rate it is planned at, not the scenario's."""
    import json

    out = tmp_path / "aws.yaml"
    assert cli("catalog", "import", "gpuhunt", DATA / "aws.csv", "--out", out, *DATE).exit_code == 0
    path = write(_mixed(out, {"rate": 7.1, "date": "2026-09-30"}))
    result = cli("validate", path)
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "catalog jizhisuan-2026-09 (2026-09-24, CNY):" in text
    assert "catalog aws (2026-09-14, USD, at 7.1 CNY per USD):" in text
    as_json = cli("validate", path, "--json", "-")
    catalogs = json.loads(as_json.stdout)["catalogs"]
    assert [(c["name"], c["currency"], c["exchange_rate"]) for c in catalogs] == [
        ("jizhisuan-2026-09", "CNY", None),
        ("aws", "USD", "7.1"),
    ]


def test_a_catalog_in_another_currency_without_a_rate_is_refused(
    cli: Any, tmp_path: Path, write: Any
) -> None:
    out = tmp_path / "aws.yaml"
    assert cli("catalog", "import", "gpuhunt", DATA / "aws.csv", "--out", out, *DATE).exit_code == 0
    result = cli("validate", write(_mixed(out, None)))
    assert result.exit_code != 0
    text = " ".join(result.output.split())
    assert (
        "scenario currency CNY differs from catalog aws's USD; state its rate as exchange_rates"
        in text
    )


def test_catalogs_and_rates_are_the_same_as_catalog_and_exchange_rates(
    cli: Any, tmp_path: Path, write: Any
) -> None:
    """`catalogs: [a, b]` with `rates: {USD: {CNY: 7.1, as_of: DATE}}` loads exactly as
    `catalog:` with `exchange_rates:`; a rate into another currency is refused by name."""
    from planner.domain.errors import LoadError
    from planner.domain.load import load_scenario

    out = tmp_path / "aws.yaml"
    assert cli("catalog", "import", "gpuhunt", DATA / "aws.csv", "--out", out, *DATE).exit_code == 0
    long = _mixed(out, {"rate": 7.1, "date": "2026-09-30"})
    short = {k: v for k, v in long.items() if k not in ("catalog", "exchange_rates")}
    short |= {"catalogs": long["catalog"], "rates": {"USD": {"CNY": 7.1, "as_of": "2026-09-30"}}}
    assert load_scenario(write(short)).offers == load_scenario(write(long)).offers
    wrong = {**short, "rates": {"USD": {"EUR": 6.5, "as_of": "2026-09-30"}}}
    with pytest.raises(LoadError) as caught:
        load_scenario(write(wrong))
    assert "rates.USD: expected {CNY: <CNY per USD>, as_of: YYYY-MM-DD}" in str(caught.value)


def test_an_offer_id_in_two_catalogs_is_named_by_its_catalog(tmp_path: Path, write: Any) -> None:
    """Two catalogs that both sell an offer `box`: each is named by its catalog (`east.box`,
    `west.box`), and a scenario change to the bare id is refused with both names."""
    from planner.domain.errors import LoadError
    from planner.domain.load import load_scenario
    from tests.planning import job

    for name, price in (("east", 2), ("west", 3)):
        catalog = {
            "name": name,
            "currency": "CNY",
            "date": "2026-10-01",
            "source": "a test",
            "offers": [{"id": "box", "card": "a100-80g", "hourly": {"price": price}}],
        }
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(catalog))
    scenario = {
        "name": "clash",
        "currency": "CNY",
        "timezone": "Asia/Shanghai",
        "horizon": {"start": "2026-10-01", "end": "2026-10-03"},
        "catalogs": [str(tmp_path / "east.yaml"), str(tmp_path / "west.yaml")],
        "workloads": [job("tune", 5)],
    }
    offers = load_scenario(write(scenario)).offers
    assert {i: str(o.hourly.price) for i, o in offers.items() if o.hourly} == {
        "east.box": "2",
        "west.box": "3",
    }
    patched = {**scenario, "offers": [{"id": "west.box", "hourly": {"price": 1}}]}
    west = load_scenario(write(patched)).offers["west.box"].hourly
    assert west is not None and str(west.price) == "1"
    with pytest.raises(LoadError) as caught:
        load_scenario(write({**scenario, "offers": [{"id": "box", "hourly": {"price": 1}}]}))
    assert "offer id 'box' is in catalogs east and west" in str(caught.value)
    assert "east.box or west.box" in str(caught.value)


def test_a_row_without_any_price_is_listed_not_dropped(tmp_path: Path) -> None:
    path = tmp_path / "plain.csv"
    path.write_text(
        "provider,instance,region,gpu_name,gpu_count,gpu_memory_gb,price,spot_price\n"
        "acme,box-1,eu,A100,1,80,2.5,\n"
        "acme,box-2,eu,A100,1,80,,\n"
    )
    rows = read_rows("csv", [path])
    result = import_catalog(rows, "acme", "EUR", "tests")
    assert [o["id"] for o in result.catalog["offers"]] == ["acme-box-1-eu"]
    assert [(row.instance, why) for row, why in result.skipped] == [("box-2", "no price")]


def test_every_card_an_import_may_add_loads(tmp_path: Path) -> None:
    """Each card of catalogs/import/cards.yaml, written into an imported catalog, loads (a
    V100 entry once broke on an unquoted comma and no fixture used it)."""
    from planner.catalog_import import GPU_CARDS

    path = tmp_path / "plain.csv"
    lines = ["provider,instance,region,gpu_name,gpu_count,gpu_memory_gb,price,spot_price"]
    names = sorted(GPU_CARDS, key=lambda k: (k[0], k[1] or 0))
    lines += [f"acme,box-{i},eu,{n},1,{m or ''},1.0," for i, (n, m) in enumerate(names)]
    path.write_text("\n".join(lines) + "\n")
    result = import_catalog(read_rows("csv", [path]), "all", "EUR", "tests")
    assert not result.skipped
    out = tmp_path / "all.yaml"
    out.write_text(yaml.safe_dump(result.catalog, sort_keys=False))
    _, cards = load_catalogs([out])
    assert set(GPU_CARDS.values()) <= set(cards)


def test_a_stated_network_is_set_on_every_offer_imported(cli: Any, tmp_path: Path) -> None:
    out = tmp_path / "aws.yaml"
    run = cli(
        "catalog", "import", "skypilot", AWS_VMS, "--out", out, *DATE, "--network-gbps", "3200"
    )
    assert run.exit_code == 0, run.output
    offers = yaml.safe_load(out.read_text())["offers"]
    assert offers and all(o["network"] == {"gbps": 3200.0} for o in offers)
    bare = tmp_path / "bare.yaml"
    assert cli("catalog", "import", "skypilot", AWS_VMS, "--out", bare, *DATE).exit_code == 0
    assert not any("network" in o for o in yaml.safe_load(bare.read_text())["offers"])


def test_a_name_with_its_form_and_memory_words_maps_by_them(cli: Any, tmp_path: Path) -> None:
    """Price lists write `A100-SXM4-80GB` or `H100 80GB HBM3`: the model, its form factor and
    its memory. The model and the memory decide (as a memory column would); a memory column
    that says another memory than the name leaves the row out; a name without its memory
    comes in several sizes and says so."""
    assert card_for("A100-SXM4-80GB", None) == "a100-80g"
    assert card_for("A100-SXM4-40GB", None) == "a100-40g"
    assert card_for("H100 80GB HBM3", None) == "h100-80g"
    assert card_for("A100 PCIe 80GB", 79.6) == "a100-80g"  # GiB as software reports it
    assert card_for("A100 PCIe 40GB", 80) is None  # the name and the row disagree
    assert by_name_alone("A100-SXM4", None) == [40, 80] and by_name_alone("A100-80GB", None) == []
    path = _prices(
        tmp_path,
        "acme,a,us,A100-SXM4-80GB,8,,12",
        "acme,h,us,H100 80GB HBM3,1,,3",
        "acme,m,us,A100,1,81920,2",  # MiB in the GB column: listed, with what it would be
    )
    text, offers = _imported(cli, path)
    assert "81920 MiB would be 80 GB" in text
    assert {i: o["card"] for i, o in offers.items()} == {
        "acme-a-us": "a100-80g", "acme-h-us": "h100-80g"
    }  # fmt: skip


def test_an_h100_nvl_is_its_own_card_not_an_h100(cli: Any, tmp_path: Path) -> None:
    """The H100 NVL (94 GB, PCIe) is a card of its own: its name maps to it with or without
    its memory (as marketed, or in GiB as its nvidia-smi reports 95830 MiB), and the
    imported catalog carries its spec; an H100 of 94 GB is still no card, and neither is an
    H100 NVL of 80."""
    assert card_for("H100 NVL", None) == card_for("NVIDIA H100 NVL", 95830 / 1024)
    assert card_for("H100 NVL", 94) == "h100-nvl-94g"
    assert card_for("H100", 94) is None and card_for("H100 NVL", 80) is None
    path = _prices(tmp_path, "acme,nvl,us,H100 NVL,2,94,5.0")
    _, offers = _imported(cli, path)
    assert offers["acme-nvl-us"]["card"] == "h100-nvl-94g"
    [spec] = yaml.safe_load((tmp_path / "acme.yaml").read_text())["cards"]
    assert (spec["id"], spec["memory_gb"]["value"], spec["interconnect"]["value"]) == (
        "h100-nvl-94g", 94, "pcie"
    )  # fmt: skip
