"""Where the shipped data lives (lib.data): `data/` beside the package, or the folder $COURSE_DATA names (the
tests' copies, a reader's own)."""
from lib.data import PACKAGE_DATA, data_dir


def test_the_shipped_data_or_the_folder_named(monkeypatch, tmp_path):
    monkeypatch.delenv("COURSE_DATA", raising=False)
    assert data_dir() == PACKAGE_DATA and (PACKAGE_DATA / "models" / "calling-game" / "meta.json").is_file()
    monkeypatch.setenv("COURSE_DATA", str(tmp_path))
    assert data_dir() == tmp_path
    monkeypatch.setenv("COURSE_DATA", "")
    assert data_dir() == PACKAGE_DATA, "an empty setting means the shipped data"
