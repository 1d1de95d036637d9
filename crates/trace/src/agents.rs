//! HSA agent ids, which count CPUs (rocprofv3 `Agent_Id`, rocprof v1 `gpu-id` and `dev-id`), as
//! GPU indexes: the meaning `--device` has in every format.

/// Agent ids in the order that gives their GPU index.
pub(crate) struct AgentMap {
    ids: Vec<u32>,
}

impl AgentMap {
    /// The agents that ran kernels, in id order, are GPU 0, 1, …; agents seen only in `others`
    /// (the GPU end of copies) follow them, in id order.
    pub(crate) fn new(
        kernels: impl IntoIterator<Item = u32>,
        others: impl IntoIterator<Item = u32>,
    ) -> Self {
        let mut ids: Vec<u32> = kernels.into_iter().collect();
        ids.sort_unstable();
        ids.dedup();
        let mut rest: Vec<u32> = others
            .into_iter()
            .filter(|a| ids.binary_search(a).is_err())
            .collect();
        rest.sort_unstable();
        rest.dedup();
        ids.extend(rest);
        AgentMap { ids }
    }

    /// The GPU index of `agent` (the agent id itself when it was never seen).
    pub(crate) fn gpu(&self, agent: u32) -> u32 {
        self.ids
            .iter()
            .position(|&a| a == agent)
            .and_then(|i| u32::try_from(i).ok())
            .unwrap_or(agent)
    }

    /// `agent 4 → GPU 0, agent 5 → GPU 1`.
    pub(crate) fn describe(&self) -> String {
        self.ids
            .iter()
            .enumerate()
            .map(|(i, a)| format!("agent {a} → GPU {i}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_agents_first_then_copy_agents() {
        let m = AgentMap::new([5, 4, 5], [9, 4, 2]);
        assert_eq!(
            (m.gpu(4), m.gpu(5), m.gpu(2), m.gpu(9), m.gpu(7)),
            (0, 1, 2, 3, 7)
        );
        assert_eq!(
            m.describe(),
            "agent 4 → GPU 0, agent 5 → GPU 1, agent 2 → GPU 2, agent 9 → GPU 3"
        );
        assert_eq!(AgentMap::new([], []).describe(), "");
    }
}
