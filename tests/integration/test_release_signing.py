"""A signed release: SHA256SUMS signed with a throwaway gpg key verifies, and a tampered one does not."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import needs
import pytest

from forge import release

pytestmark = pytest.mark.integration
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))  # the unit tests' planted cells, one copy
from test_release import CELLS, EPOCH, plant  # noqa: E402


def _gpg() -> str:
    return needs.program("gpg")


def test_signed_sums_verify(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gpg = _gpg()
    home = tmp_path / "gnupg"
    home.mkdir(mode=0o700)
    monkeypatch.setenv("GNUPGHOME", str(home))
    subprocess.run(
        [
            gpg,
            "--batch",
            "--passphrase",
            "",
            "--quick-gen-key",
            "forge-test <release@forge.invalid>",
            "ed25519",
            "sign",
            "1d",
        ],
        check=True,
        capture_output=True,
    )
    try:
        _sign_and_verify(gpg, tmp_path)
    finally:  # the agent gpg started for this throwaway home ends with the test
        subprocess.run(["gpgconf", "--kill", "gpg-agent"], check=False, capture_output=True)


def _sign_and_verify(gpg: str, tmp_path: Path) -> None:
    cells = [plant(tmp_path / "dist", c) for c in CELLS]
    out = release.assemble(cells, tmp_path / "rel", "1.0", None, EPOCH, signing_key="release@forge.invalid")
    sums, signature = out / "SHA256SUMS", out / "SHA256SUMS.asc"
    assert signature.read_text().startswith("-----BEGIN PGP SIGNATURE-----")
    ok = subprocess.run([gpg, "--batch", "--verify", str(signature), str(sums)], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    sums.write_text(sums.read_text().replace("  ", "  x", 1))
    tampered = subprocess.run([gpg, "--batch", "--verify", str(signature), str(sums)], capture_output=True, text=True)
    assert tampered.returncode != 0 and "BAD signature" in tampered.stderr
    with pytest.raises(release.ReleaseError, match="gpg could not sign"):
        release.assemble(cells, tmp_path / "rel", "2.0", None, EPOCH, signing_key="nobody@forge.invalid")
    assert not (tmp_path / "rel" / "2.0").exists()
