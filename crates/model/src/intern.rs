//! Interned names: a handle per distinct value, so a profile stores each kernel name once.

use std::collections::HashMap;
use std::hash::Hash;

/// A handle to an interned kernel or range name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NameId(pub u32);

/// Interns values so a trace that repeats one long name thousands of times stores it once.
#[derive(Clone, Debug)]
pub struct Interner<T> {
    values: Vec<T>,
    index: HashMap<T, u32>,
}

impl<T> Default for Interner<T> {
    fn default() -> Self {
        Interner {
            values: Vec::new(),
            index: HashMap::new(),
        }
    }
}

impl<T: Clone + Eq + Hash> Interner<T> {
    /// The id of `value`, adding it if new.
    pub fn intern(&mut self, value: T) -> u32 {
        if let Some(&id) = self.index.get(&value) {
            return id;
        }
        let id = u32::try_from(self.values.len()).unwrap_or(u32::MAX);
        self.values.push(value.clone());
        self.index.insert(value, id);
        id
    }
    /// Replaces each value from id `from` on by `f` of it, keeping its id (a value that becomes
    /// equal to another keeps both ids; a new value equal to either interns to the first).
    pub fn map_from(&mut self, from: usize, mut f: impl FnMut(&T) -> T) {
        let mut changed = false;
        for v in self.values.iter_mut().skip(from) {
            let new = f(v);
            if new != *v {
                *v = new;
                changed = true;
            }
        }
        if changed {
            self.index.clear();
            for (id, v) in self.values.iter().enumerate().rev() {
                self.index
                    .insert(v.clone(), u32::try_from(id).unwrap_or(u32::MAX));
            }
        }
    }
    /// The value behind an id.
    pub fn get(&self, id: u32) -> Option<&T> {
        self.values.get(id as usize)
    }
    /// Number of distinct values.
    pub fn len(&self) -> usize {
        self.values.len()
    }
    /// True when nothing has been interned.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

impl Interner<String> {
    /// The id of a string, allocating only when it is new.
    pub fn intern_str(&mut self, value: &str) -> NameId {
        if let Some(&id) = self.index.get(value) {
            return NameId(id);
        }
        NameId(self.intern(value.to_string()))
    }
    /// The string behind an id (empty when unknown).
    pub fn name(&self, id: NameId) -> &str {
        self.get(id.0).map(String::as_str).unwrap_or("")
    }
}
