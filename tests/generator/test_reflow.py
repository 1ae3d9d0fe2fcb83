"""``kgen.reflow``: docstring and comment paragraphs that a long name made too long are
rewrapped at word boundaries; everything else is left exactly as written."""

from __future__ import annotations

from kgen.reflow import reflow_long_prose


def test_a_one_line_docstring_too_long_is_wrapped_with_its_quotes() -> None:
    source = '"""Reconciles PostgresDatabaseBackupSchedule objects: edit ``reconcile``."""\n'
    assert reflow_long_prose(source, 50) == (
        '"""Reconciles PostgresDatabaseBackupSchedule\nobjects: edit ``reconcile``."""\n'
    )


def test_only_the_paragraph_with_a_long_line_is_rewrapped_and_the_indent_is_kept() -> None:
    source = (
        "class A:\n"
        '    """Short summary.\n'
        "\n"
        "    One two three four five six seven eight nine ten eleven twelve.\n"
        "    Next.\n"
        '    """\n'
        "\n"
        "    x = 1\n"
        '    """An attribute docstring."""\n'
    )
    assert reflow_long_prose(source, 40) == (
        "class A:\n"
        '    """Short summary.\n'
        "\n"
        "    One two three four five six seven\n"
        "    eight nine ten eleven twelve. Next.\n"
        '    """\n'
        "\n"
        "    x = 1\n"
        '    """An attribute docstring."""\n'
    )


def test_comment_runs_are_rewrapped_and_markers_and_code_are_not() -> None:
    source = (
        "def f() -> list[int]:\n"
        "    # alpha beta gamma delta epsilon zeta eta theta\n"
        "    # iota\n"
        "    return [\n"
        "        1,  # a trailing comment is code's, never moved even when it is too long\n"
        "        # +kgen:scaffold:marker with a long tail that must stay on its line\n"
        "    ]\n"
    )
    assert reflow_long_prose(source, 40) == (
        "def f() -> list[int]:\n"
        "    # alpha beta gamma delta epsilon\n"
        "    # zeta eta theta iota\n"
        "    return [\n"
        "        1,  # a trailing comment is code's, never moved even when it is too long\n"
        "        # +kgen:scaffold:marker with a long tail that must stay on its line\n"
        "    ]\n"
    )


def test_a_word_longer_than_the_line_stays_whole() -> None:
    source = '"""x ``averyveryverylongidentifier`` y."""\n'
    assert reflow_long_prose(source, 20) == '"""x\n``averyveryverylongidentifier``\ny."""\n'


def test_strings_that_are_not_statements_are_left_alone() -> None:
    source = 'X = """a very long string value that is data, not a docstring at all"""\n'
    assert reflow_long_prose(source, 20) == source
