"""The committed generated code is exactly what `make proto` produces now.

Edit proto/rummy/v1/*.proto, run `make proto`, and commit both: this test
fails when one moved without the other, or when a generated file was edited.
"""

from __future__ import annotations

from pathlib import Path

from scripts import gen_proto


def _tree(root: Path) -> dict[Path, str]:
    return {
        path.relative_to(root): path.read_text(encoding="utf-8")
        for path in sorted(root.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def test_generated_code_is_fresh(tmp_path: Path) -> None:
    fresh = tmp_path / "pb"
    gen_proto.generate(fresh)
    expected, committed = _tree(fresh), _tree(gen_proto.DEFAULT_OUT)

    missing = sorted(str(path) for path in expected.keys() - committed.keys())
    extra = sorted(str(path) for path in committed.keys() - expected.keys())
    both = expected.keys() & committed.keys()
    stale = sorted(str(path) for path in both if expected[path] != committed[path])
    assert not (missing or extra or stale), (
        f"services/common/pb is out of date (run `make proto`): "
        f"missing {missing}, unexpected {extra}, differing {stale}"
    )


def test_generated_code_imports_as_one_package() -> None:
    from services.common.pb.rummy.v1 import game_pb2, game_pb2_grpc, table_pb2

    assert game_pb2.DESCRIPTOR.name == "rummy/v1/game.proto"
    assert game_pb2.MeldRequest.__module__ == "services.common.pb.rummy.v1.game_pb2"
    assert hasattr(game_pb2_grpc, "GameServiceStub")
    # Messages shared between files resolve to one class, not two copies.
    assert game_pb2.GetTableResponse().view.__class__ is table_pb2.TableView


def test_rewrite_touches_module_paths_only() -> None:
    text = (
        "from rummy.v1 import cards_pb2 as rummy_dot_v1_dot_cards__pb2\n"
        "import rummy.v1.table_pb2\n"
        "x: rummy.v1.table_pb2.TableView\n"
        "'/rummy.v1.GameService/Watch'\n"
        "_builder.BuildTopDescriptorsAndMessages(DESCRIPTOR, 'rummy.v1.game_pb2', _globals)\n"
    )
    assert gen_proto.rewrite(text) == (
        "from services.common.pb.rummy.v1 import cards_pb2 as rummy_dot_v1_dot_cards__pb2\n"
        "import services.common.pb.rummy.v1.table_pb2\n"
        "x: services.common.pb.rummy.v1.table_pb2.TableView\n"
        "'/rummy.v1.GameService/Watch'\n"
        "_builder.BuildTopDescriptorsAndMessages("
        "DESCRIPTOR, 'services.common.pb.rummy.v1.game_pb2', _globals)\n"
    )


def test_the_operators_package_is_generated_beside_the_public_one() -> None:
    from services.common.pb.rummy.admin.v1 import admin_pb2, admin_pb2_grpc
    from services.common.pb.rummy.v1 import table_pb2

    assert admin_pb2.DESCRIPTOR.package == "rummy.admin.v1"
    assert hasattr(admin_pb2_grpc, "TableAdminServiceStub")
    # It uses the public package's messages: one class, not a copy.
    assert admin_pb2.GetTableLogResponse().view.__class__ is table_pb2.TableView
    assert gen_proto.rewrite(
        "from rummy.admin.v1 import admin_pb2\nrummy.admin.v1.admin_pb2.X"
    ) == (
        "from services.common.pb.rummy.admin.v1 import admin_pb2\n"
        "services.common.pb.rummy.admin.v1.admin_pb2.X"
    )
