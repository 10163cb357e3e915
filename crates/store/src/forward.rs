//! What both backends forward alike to the queries they share, written
//! once: a [`Store`](crate::Store) impl expands it with its own `db()`.
//! A module of its own, since the queries' modules are what it names.

/// The reads both backends make alike, each on a connection of its own
/// (`self.db()`): forwarded once here, not twice.
macro_rules! store_reads {
    () => {
        fn list(
            &mut self,
            q: &$crate::RunQuery,
        ) -> Result<Vec<$crate::RunSummary>, $crate::StoreError> {
            $crate::listing::list(&mut self.db(), q)
        }

        fn schema_version(&mut self) -> Result<i64, $crate::StoreError> {
            $crate::ops::schema_version(&mut self.db())
        }

        fn device(
            &mut self,
            key: &str,
        ) -> Result<Option<$crate::DeviceMemory>, $crate::StoreError> {
            $crate::ops::device(&mut self.db(), key)
        }

        fn devices(&mut self) -> Result<Vec<$crate::DeviceMemory>, $crate::StoreError> {
            $crate::listing::devices(&mut self.db())
        }

        fn seen_devices(&mut self) -> Result<Vec<$crate::SeenDevice>, $crate::StoreError> {
            $crate::listing::seen_devices(&mut self.db())
        }

        fn samples(
            &mut self,
            id: $crate::RunId,
            after: Option<u64>,
        ) -> Result<Vec<(u64, iomark_model::live::LiveSample)>, $crate::StoreError> {
            $crate::samples::after(&mut self.db(), id, after)
        }

        fn in_progress(&mut self, since_ms: u64) -> Result<Vec<$crate::RunId>, $crate::StoreError> {
            $crate::samples::in_progress(&mut self.db(), since_ms)
        }
    };
}
pub(crate) use store_reads;
