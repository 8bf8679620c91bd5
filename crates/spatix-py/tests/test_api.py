"""The type stubs and docstrings match the module, and the docstrings' examples run."""

import ast
import doctest
import pathlib

import spatix

STUB = pathlib.Path(spatix.__file__).with_name("__init__.pyi")


def stub_classes():
    tree = ast.parse(STUB.read_text())
    return {
        node.name: {f.name for f in node.body if isinstance(f, ast.FunctionDef)}
        for node in tree.body
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_")  # private: typing helpers
    }


def stub_functions():
    return {node.name for node in ast.parse(STUB.read_text()).body if isinstance(node, ast.FunctionDef)}


def test_the_package_ships_its_stubs_and_marker():
    assert STUB.is_file()
    assert STUB.with_name("py.typed").is_file()


def test_stubs_name_every_class_and_method():
    stubs = stub_classes()
    assert set(stubs) | stub_functions() == set(spatix.__all__)
    for name in stub_functions():
        assert callable(getattr(spatix, name)) and not isinstance(getattr(spatix, name), type), name
    for name, methods in stubs.items():
        cls = getattr(spatix, name)
        public = {m for m in vars(cls) if not m.startswith("_")} | {m for m in methods if m.startswith("__")}
        assert methods - {"__init__"} >= public - {"__init__"}, name
        for m in methods - {"__init__"}:
            assert hasattr(cls, m), f"{name}.{m} is in the stub but not in the module"


def test_every_listed_structure_is_a_class():
    """Every structure of the library's list (``spatix::for_each_structure!``, which the
    extension hands over as ``_structures``) has a class of its name in the package."""
    from spatix import _spatix

    assert _spatix._structures
    for name in _spatix._structures:
        assert name in spatix.__all__ and isinstance(getattr(spatix, name), type), name


def test_every_public_method_has_a_docstring():
    for name in spatix.__all__:
        cls = getattr(spatix, name)
        assert cls.__doc__ and len(cls.__doc__) > 40, name
        if not isinstance(cls, type):
            continue
        for m, member in vars(cls).items():
            if not m.startswith("_"):
                assert member.__doc__, f"{name}.{m}"


def test_docstring_examples_run():
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    examples = 0
    for name in spatix.__all__:
        for test in finder.find(getattr(spatix, name), name, globs={}):
            examples += len(test.examples)
            runner.run(test)
    assert examples >= 8
    assert runner.failures == 0


def test_readme_example_runs():
    readme = pathlib.Path(__file__).resolve().parents[3] / "README.md"
    section = readme.read_text().split("## From Python", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, "README.md", "exec"), {})


def test_version_is_the_packages():
    import importlib.metadata

    assert spatix.__version__ == importlib.metadata.version("spatix")


def test_the_packages_readme_is_its_long_description_and_its_example_runs():
    import importlib.metadata

    readme = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text()
    metadata = importlib.metadata.metadata("spatix")
    description = metadata["Description"] or metadata.get_payload()
    assert description.strip() == readme.strip()
    code = readme.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, "crates/spatix-py/README.md", "exec"), {})
