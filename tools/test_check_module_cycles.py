"""Tests of tools/check_module_cycles.py on small fake crates (stdlib only).

Run: python3 -m unittest discover -s tools -p 'test_*.py'
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent / "check_module_cycles.py"


def crate(root: Path, files: dict[str, str]) -> Path:
    directory = root / "fake"
    for name, text in files.items():
        path = directory / "src" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    (directory / "Cargo.toml").write_text('[package]\nname = "fake"\n', encoding="utf-8")
    return directory


def run(directory: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), str(directory)], capture_output=True, text=True, check=False)


class ModuleCycles(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def test_a_cycle_between_siblings_fails_and_is_named(self) -> None:
        out = run(
            crate(
                self.root,
                {
                    "lib.rs": "pub mod a;\npub mod b;\npub mod c;\n",
                    "a.rs": "use crate::b::B;\npub struct A;\n",
                    "b.rs": "pub struct B;\npub fn f() -> crate::c::C { crate::c::C }\n",
                    "c.rs": "pub struct C;\nuse crate::{a::{self, A}};\n",
                },
            )
        )
        self.assertEqual(out.returncode, 1, out.stdout + out.stderr)
        self.assertIn("among the children of `crate`: a -> b -> c -> a", out.stdout)
        self.assertIn("c -> a: fake/src/c.rs:2 `crate::a`", out.stdout)

    def test_parents_children_tests_comments_and_strings_are_no_cycle(self) -> None:
        out = run(
            crate(
                self.root,
                {
                    "lib.rs": """
                        //! Links in docs are no uses: [`crate::b::B`].
                        pub mod a;
                        pub mod b;
                        pub use a::inner::X;
                        fn uses_child() -> a::inner::X { a::inner::X }
                    """,
                    "a/mod.rs": """
                        pub mod inner;
                        pub(crate) fn f() -> &'static str { "crate::b::B" }
                        pub(in crate::a) struct Private;
                        const C: char = '"'; fn g<'a>(x: &'a str) -> &'a str { x }
                        use crate::b::B; // a uses b
                    """,
                    "a/inner.rs": "use super::f;\npub struct X;\npub fn up() { super::super::a::f(); }\n",
                    "b.rs": """
                        pub struct B;
                        /* crate::a::f() in a comment /* nested */ still a comment */
                        #[cfg(test)]
                        mod tests {
                            use crate::a::f; // tests may use anything
                        }
                        #[cfg(all(test, unix))]
                        fn helper() { crate::a::f(); }
                        #[cfg(test)]
                        mod more;
                    """,
                },
            )
        )
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertIn("no cycle", out.stdout)

    def test_a_cycle_deeper_down_names_its_parent(self) -> None:
        out = run(
            crate(
                self.root,
                {
                    "lib.rs": "pub mod m;\n",
                    "m.rs": """
                        pub mod x {
                            pub fn f() { super::y::g() }
                        }
                        pub mod y;
                    """,
                    "m/y.rs": "use super::{x::{self}};\npub fn g() {}\n",
                },
            )
        )
        self.assertEqual(out.returncode, 1, out.stdout + out.stderr)
        self.assertIn("among the children of `crate::m`: x -> y -> x", out.stdout)

    def test_a_missing_module_file_is_an_error(self) -> None:
        out = run(crate(self.root, {"lib.rs": "mod gone;\n"}))
        self.assertEqual(out.returncode, 2, out.stdout + out.stderr)
        self.assertIn("module `gone` is declared", out.stderr)


if __name__ == "__main__":
    unittest.main()
