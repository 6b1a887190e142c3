//! Paged: memory is `capacity / page_size` pages; a request holds `ceil(size / page_size)`
//! of them and takes one more each time it grows past a page boundary (allocation on demand,
//! as PagedAttention does for the KV cache). Any free page will do, so there is no external
//! fragmentation; the unused tail of each request's last page is internal fragmentation.
//! A request that cannot get a page while growing is preempted (its pages are freed).

use super::{AnyStrategy, Strategy};
use crate::error::{invalid, Result};

/// The strategy's row in the table: pages of `page_size` units, at most the capacity.
pub fn build(capacity: u64, n_requests: usize, page_size: u64) -> Result<AnyStrategy> {
    if page_size == 0 || page_size > capacity {
        return Err(invalid("page_size", page_size, format!("a positive number of units up to capacity={capacity}")));
    }
    Ok(AnyStrategy::Paged(Paged::new(capacity, n_requests, page_size)))
}

#[derive(Debug, Clone)]
pub struct Paged {
    page_size: u64,
    total_pages: u64,
    free_pages: u64,
    /// Pages held by each request.
    pages: Vec<u64>,
}

impl Paged {
    pub fn new(capacity: u64, n_requests: usize, page_size: u64) -> Self {
        let total_pages = capacity / page_size.max(1);
        Paged { page_size: page_size.max(1), total_pages, free_pages: total_pages, pages: vec![0; n_requests] }
    }
}

impl Strategy for Paged {
    fn admit(&mut self, id: usize, initial: u64, _final_size: u64) -> Option<u64> {
        let need = initial.div_ceil(self.page_size);
        if need > self.free_pages {
            return None;
        }
        *self.pages.get_mut(id)? = need;
        self.free_pages -= need;
        Some(need * self.page_size)
    }
    fn grow(&mut self, id: usize, new_size: u64) -> Option<u64> {
        let held = self.pages.get_mut(id)?;
        if new_size <= *held * self.page_size {
            return Some(0);
        }
        if self.free_pages == 0 {
            return None;
        }
        *held += 1;
        self.free_pages -= 1;
        Some(self.page_size)
    }
    fn release(&mut self, id: usize) -> u64 {
        let Some(held) = self.pages.get_mut(id) else { return 0 };
        let n = std::mem::take(held);
        self.free_pages += n;
        n * self.page_size
    }
    fn largest_free(&self) -> u64 {
        self.free_pages * self.page_size
    }
    fn allocated(&self) -> u64 {
        (self.total_pages - self.free_pages) * self.page_size
    }
    fn check(&self) -> std::result::Result<(), String> {
        let held: u64 = self.pages.iter().sum();
        if held + self.free_pages != self.total_pages {
            return Err(format!("held pages {held} + free pages {} != {} pages", self.free_pages, self.total_pages));
        }
        Ok(())
    }
}
