"""The catalog kept inside the lake: a pyiceberg ``Catalog`` whose table pointers are objects of the lake
itself (``tables.lake_pointers``), the default catalog of every lake (docs/tables.md, "Catalogs").

No server and no file outside the lake: a table's state is its Iceberg metadata file (under the warehouse,
by default the lake's own prefix) and the pointer naming it. A commit writes the new metadata file, then
moves the pointer only from the version it read (``UpdateIfMatch``): a concurrent commit loses with
pyiceberg's ``CommitFailedException`` and never overwrites, and a crash between the two writes leaves the
table at its old metadata (the new file is unreferenced). That is the lake's own commit protocol, on every
store the lake supports. Namespaces are one level; views and renames are not supported."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn

from pyiceberg.catalog import Catalog, MetastoreCatalog, PropertiesUpdateSummary
from pyiceberg.exceptions import (
    CommitFailedException,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    TableAlreadyExistsError,
)
from pyiceberg.io import load_file_io
from pyiceberg.partitioning import UNPARTITIONED_PARTITION_SPEC, PartitionSpec
from pyiceberg.serializers import FromInputFile
from pyiceberg.table import CommitTableResponse, Table
from pyiceberg.table.sorting import UNSORTED_SORT_ORDER, SortOrder
from pyiceberg.typedef import EMPTY_DICT, Identifier, Properties

from kafka_segments.storage.base import ObjectStore
from kafka_segments.tables import lake_pointers as pointers

if TYPE_CHECKING:
    import pyarrow as pa
    from pyiceberg.schema import Schema
    from pyiceberg.table.metadata import TableMetadata
    from pyiceberg.table.update import TableRequirement, TableUpdate
    from pyiceberg.view import View


class LakeCatalog(MetastoreCatalog):
    """A catalog whose tables are pointer objects in ``store`` (the lake). ``properties``: pyiceberg's
    (``warehouse``, ``s3.*`` for the FileIO)."""

    def __init__(self, name: str, *, store: ObjectStore, **properties: str) -> None:
        super().__init__(name, **properties)
        self.store = store

    def create_table(
        self,
        identifier: str | Identifier,
        schema: Schema | pa.Schema,
        location: str | None = None,
        partition_spec: PartitionSpec = UNPARTITIONED_PARTITION_SPEC,
        sort_order: SortOrder = UNSORTED_SORT_ORDER,
        properties: Properties = EMPTY_DICT,
    ) -> Table:
        namespace, name = self._names(identifier)
        if pointers.read_pointer(self.store, namespace, name) is not None:
            raise TableAlreadyExistsError(f"Table {namespace}.{name} already exists")
        staged = self._create_staged_table(
            identifier, schema, location, partition_spec, sort_order, properties
        )
        self._write_metadata(staged.metadata, staged.io, staged.metadata_location)
        if not pointers.create_pointer(self.store, namespace, name, staged.metadata_location):
            raise TableAlreadyExistsError(f"Table {namespace}.{name} already exists")
        return self.load_table((namespace, name))

    def register_table(
        self, identifier: str | Identifier, metadata_location: str, overwrite: bool = False
    ) -> Table:
        """Point a new table at an existing metadata file (``overwrite`` is not supported)."""
        if overwrite:
            _unsupported("register_table(overwrite=True)")
        namespace, name = self._names(identifier)
        self.load_namespace_properties(namespace)
        if not pointers.create_pointer(self.store, namespace, name, metadata_location):
            raise TableAlreadyExistsError(f"Table {namespace}.{name} already exists")
        return self.load_table((namespace, name))

    def load_table(self, identifier: str | Identifier) -> Table:
        namespace, name = self._names(identifier)
        pointer = pointers.read_pointer(self.store, namespace, name)
        if pointer is None:
            raise NoSuchTableError(f"Table does not exist: {namespace}.{name}")
        return self._table((namespace, name), pointer.metadata_location)

    def drop_table(self, identifier: str | Identifier) -> None:
        """Forget the table (its metadata and data files stay: ``purge_table`` deletes them too)."""
        namespace, name = self._names(identifier)
        if pointers.read_pointer(self.store, namespace, name) is None:
            raise NoSuchTableError(f"Table does not exist: {namespace}.{name}")
        pointers.delete_pointer(self.store, namespace, name)

    def rename_table(self, from_identifier: str | Identifier, to_identifier: str | Identifier) -> Table:
        _unsupported("rename_table")

    def commit_table(
        self, table: Table, requirements: tuple[TableRequirement, ...], updates: tuple[TableUpdate, ...]
    ) -> CommitTableResponse:
        """Write the new metadata file, then move the pointer from the version read.

        Raises:
            CommitFailedException: a requirement does not hold against the current metadata, or another
                commit moved the pointer meanwhile.
            TableAlreadyExistsError: a table created meanwhile (a create transaction).
        """
        namespace, name = self._names(table.name())
        pointer = pointers.read_pointer(self.store, namespace, name)
        current = None if pointer is None else self._table((namespace, name), pointer.metadata_location)
        staged = self._update_and_stage_table(current, (namespace, name), requirements, updates)
        if current is not None and staged.metadata == current.metadata:
            return _response(current.metadata, current.metadata_location)
        self._write_metadata(staged.metadata, staged.io, staged.metadata_location)
        if pointer is None:
            if not pointers.create_pointer(self.store, namespace, name, staged.metadata_location):
                raise TableAlreadyExistsError(f"Table {namespace}.{name} already exists")
        elif not pointers.move_pointer(self.store, namespace, name, pointer, staged.metadata_location):
            raise CommitFailedException(f"Table has been updated by another process: {namespace}.{name}")
        return _response(staged.metadata, staged.metadata_location)

    def create_namespace(self, namespace: str | Identifier, properties: Properties = EMPTY_DICT) -> None:
        name = self._namespace(namespace)
        if self.namespace_exists(name) or not pointers.write_namespace(
            self.store, name, properties, etag=None
        ):
            raise NamespaceAlreadyExistsError(f"Namespace {name} already exists")

    def drop_namespace(self, namespace: str | Identifier) -> None:
        name = self._namespace(namespace)
        if tables := self.list_tables(name):
            raise NamespaceNotEmptyError(f"Namespace {name} is not empty. {len(tables)} tables exist.")
        pointers.delete_namespace(self.store, name)

    def list_tables(self, namespace: str | Identifier) -> list[Identifier]:
        name = self._namespace(namespace)
        self.load_namespace_properties(name)
        return [(name, table) for table in pointers.table_names(self.store, name)]

    def list_namespaces(self, namespace: str | Identifier = ()) -> list[Identifier]:
        """The namespaces (one level: a namespace given has none inside)."""
        if namespace:
            self.load_namespace_properties(namespace)
            return []
        return [(name,) for name in pointers.namespace_names(self.store)]

    def load_namespace_properties(self, namespace: str | Identifier) -> Properties:
        name = self._namespace(namespace)
        read = pointers.read_namespace(self.store, name)
        if read is not None:
            return read[0]
        if pointers.namespace_holds_anything(self.store, name):
            return {}
        raise NoSuchNamespaceError(f"Namespace does not exist: {name}")

    def update_namespace_properties(
        self, namespace: str | Identifier, removals: set[str] | None = None, updates: Properties = EMPTY_DICT
    ) -> PropertiesUpdateSummary:
        name = self._namespace(namespace)
        self.load_namespace_properties(name)
        read = pointers.read_namespace(self.store, name)
        current, etag = read if read is not None else ({}, None)
        summary, updated = self._get_updated_props_and_update_summary(current, removals, updates)
        if not pointers.write_namespace(self.store, name, updated, etag=etag):
            raise CommitFailedException(f"Namespace {name}'s properties were updated by another process")
        return summary

    def list_views(self, namespace: str | Identifier) -> list[Identifier]:
        return []

    def view_exists(self, identifier: str | Identifier) -> bool:
        return False

    def load_view(self, identifier: str | Identifier) -> View:
        _unsupported("views")

    def register_view(self, identifier: str | Identifier, metadata_location: str) -> View:
        _unsupported("views")

    def drop_view(self, identifier: str | Identifier) -> None:
        _unsupported("views")

    def create_view(self, *args: Any, **kwargs: Any) -> View:
        _unsupported("views")

    def _table(self, identifier: Identifier, metadata_location: str) -> Table:
        io = load_file_io(properties=self.properties, location=metadata_location)
        metadata = FromInputFile.table_metadata(io.new_input(metadata_location))
        return Table(
            identifier=identifier,
            metadata=metadata,
            metadata_location=metadata_location,
            io=self._load_file_io(metadata.properties, metadata_location),
            catalog=self,
        )

    @staticmethod
    def _names(identifier: str | Identifier) -> tuple[str, str]:
        return Catalog.identifier_to_database_and_table(identifier, NoSuchTableError)

    @staticmethod
    def _namespace(namespace: str | Identifier) -> str:
        parts = Catalog.identifier_to_tuple(namespace)
        if len(parts) != 1:
            raise NoSuchNamespaceError(f"the lake's catalog has one level of namespaces, not {namespace!r}")
        return parts[0]


def _response(metadata: TableMetadata, location: str) -> CommitTableResponse:
    """pyiceberg's answer to a commit (its fields' aliases are not Python names: built from the names)."""
    return CommitTableResponse.model_construct(metadata=metadata, metadata_location=location)


def _unsupported(operation: str) -> NoReturn:
    raise NotImplementedError(f"the catalog kept inside the lake does not support {operation}")
