//! Walking an error's chain of causes.

use std::error::Error;

/// `error`, then each error that caused it, outermost first.
pub(crate) fn causes<'a>(error: &'a (dyn Error + 'static)) -> impl Iterator<Item = &'a (dyn Error + 'static)> {
    std::iter::successors(Some(error), |&error| error.source())
}
