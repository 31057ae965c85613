//! The control-flow graph: successors, predecessors, dominators and immediate
//! post-dominators (the points where divergent lanes reconverge).

use petgraph::algo::dominators::{Dominators, simple_fast};
use petgraph::graph::{DiGraph, NodeIndex};

use crate::entity::Block;
use crate::function::Function;

/// Control-flow facts about one function. Built once, read by the verifier, the
/// simulator's decoder and the passes.
#[derive(Clone, Debug)]
pub struct Cfg {
    succs: Vec<Vec<Block>>,
    preds: Vec<Vec<Block>>,
    idom: Vec<Option<Block>>,
    ipdom: Vec<Option<Block>>,
    reachable: Vec<bool>,
    rpo: Vec<Block>,
}

impl Cfg {
    /// Computes the graph and its dominator trees.
    pub fn new(func: &Function) -> Cfg {
        let n = func.blocks.len();
        let mut succs = vec![Vec::new(); n];
        let mut preds = vec![Vec::new(); n];
        for b in func.block_ids() {
            for (t, _) in func.block(b).term.targets() {
                if t.index() < n && !succs[b.index()].contains(&t) {
                    succs[b.index()].push(t);
                    preds[t.index()].push(b);
                }
            }
        }

        // Forward graph for dominators.
        let mut fwd: DiGraph<(), ()> = DiGraph::with_capacity(n, n * 2);
        for _ in 0..n {
            fwd.add_node(());
        }
        for (b, ss) in succs.iter().enumerate() {
            for s in ss {
                fwd.add_edge(NodeIndex::new(b), NodeIndex::new(s.index()), ());
            }
        }
        let mut reachable = vec![false; n];
        let mut rpo = Vec::new();
        if n > 0 {
            let mut dfs = petgraph::visit::DfsPostOrder::new(&fwd, NodeIndex::new(0));
            while let Some(node) = dfs.next(&fwd) {
                reachable[node.index()] = true;
                rpo.push(Block(node.index() as u32));
            }
            rpo.reverse();
        }
        let idom = if n > 0 {
            let doms = simple_fast(&fwd, NodeIndex::new(0));
            to_blocks(&doms, n, None)
        } else {
            Vec::new()
        };

        // Reverse graph with a virtual exit node for post-dominators.
        let exit = NodeIndex::new(n);
        let mut rev: DiGraph<(), ()> = DiGraph::with_capacity(n + 1, n * 2 + 1);
        for _ in 0..=n {
            rev.add_node(());
        }
        for (b, ss) in succs.iter().enumerate() {
            for s in ss {
                rev.add_edge(NodeIndex::new(s.index()), NodeIndex::new(b), ());
            }
            if func.blocks[b].term.targets().is_empty() {
                rev.add_edge(exit, NodeIndex::new(b), ());
            }
        }
        let pdoms = simple_fast(&rev, exit);
        let ipdom = to_blocks(&pdoms, n, Some(exit));

        Cfg {
            succs,
            preds,
            idom,
            ipdom,
            reachable,
            rpo,
        }
    }

    /// The distinct successors of a block, in terminator order.
    pub fn successors(&self, b: Block) -> &[Block] {
        &self.succs[b.index()]
    }

    /// The distinct predecessors of a block.
    pub fn predecessors(&self, b: Block) -> &[Block] {
        &self.preds[b.index()]
    }

    /// Whether the entry reaches the block.
    pub fn is_reachable(&self, b: Block) -> bool {
        self.reachable[b.index()]
    }

    /// Reachable blocks in reverse postorder (every block after its dominators).
    pub fn reverse_postorder(&self) -> &[Block] {
        &self.rpo
    }

    /// The immediate dominator, `None` for the entry and unreachable blocks.
    pub fn immediate_dominator(&self, b: Block) -> Option<Block> {
        self.idom[b.index()]
    }

    /// Whether `a` dominates `b` (every block dominates itself). Unreachable blocks are
    /// dominated by nothing but themselves.
    pub fn dominates(&self, a: Block, b: Block) -> bool {
        on_tree_path(&self.idom, a, b)
    }

    /// The immediate post-dominator: the first block every path from `b` to the exit goes
    /// through. `None` means the function's exit (lanes reconverge only when they finish),
    /// also for blocks from which no exit is reachable.
    pub fn immediate_post_dominator(&self, b: Block) -> Option<Block> {
        self.ipdom[b.index()]
    }

    /// Whether every path from `b` to the exit goes through `pd` (every block
    /// post-dominates itself).
    pub fn post_dominates(&self, pd: Block, b: Block) -> bool {
        on_tree_path(&self.ipdom, pd, b)
    }
}

/// Whether `a` is `b` or one of its ancestors in the tree given by each block's parent.
fn on_tree_path(parent: &[Option<Block>], a: Block, b: Block) -> bool {
    let mut cur = Some(b);
    while let Some(c) = cur {
        if c == a {
            return true;
        }
        cur = parent[c.index()];
    }
    false
}

fn to_blocks(
    doms: &Dominators<NodeIndex>,
    n: usize,
    virtual_root: Option<NodeIndex>,
) -> Vec<Option<Block>> {
    (0..n)
        .map(|i| {
            doms.immediate_dominator(NodeIndex::new(i))
                .filter(|d| Some(*d) != virtual_root)
                .map(|d| Block(d.index() as u32))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_module;

    fn cfg_of(body: &str) -> Cfg {
        let text = format!("kernel k {{\n{body}}}\n");
        let m = parse_module(&text).unwrap();
        Cfg::new(&m.functions[0])
    }

    #[test]
    fn diamond_reconverges_at_join() {
        let c = cfg_of(
            "bb0:\n v0 = const.pred true\n br_if v0, bb1, bb2\nbb1:\n br bb3\nbb2:\n br bb3\nbb3:\n ret\n",
        );
        assert_eq!(c.immediate_post_dominator(Block(0)), Some(Block(3)));
        assert_eq!(c.immediate_post_dominator(Block(1)), Some(Block(3)));
        assert_eq!(c.immediate_post_dominator(Block(3)), None);
        assert_eq!(c.immediate_dominator(Block(3)), Some(Block(0)));
        assert!(c.dominates(Block(0), Block(2)));
        assert!(!c.dominates(Block(1), Block(3)));
        assert_eq!(c.predecessors(Block(3)), &[Block(1), Block(2)]);
    }

    #[test]
    fn loop_with_break_reconverges_at_exit() {
        // bb1: header, bb2: body with a break to bb4, bb3: latch, bb4: exit.
        let c = cfg_of(
            "bb0:\n v0 = const.pred true\n br bb1\nbb1:\n br_if v0, bb2, bb4\nbb2:\n br_if v0, bb4, bb3\nbb3:\n br bb1\nbb4:\n ret\n",
        );
        assert_eq!(c.immediate_post_dominator(Block(1)), Some(Block(4)));
        assert_eq!(c.immediate_post_dominator(Block(2)), Some(Block(4)));
        assert_eq!(c.immediate_post_dominator(Block(3)), Some(Block(1)));
        assert_eq!(c.reverse_postorder()[0], Block(0));
    }

    #[test]
    fn early_return_reconverges_at_exit() {
        let c = cfg_of(
            "bb0:\n v0 = const.pred true\n br_if v0, bb1, bb2\nbb1:\n ret\nbb2:\n br bb3\nbb3:\n ret\n",
        );
        assert_eq!(c.immediate_post_dominator(Block(0)), None);
        assert_eq!(c.immediate_post_dominator(Block(2)), Some(Block(3)));
    }

    #[test]
    fn unreachable_and_endless_blocks() {
        let c = cfg_of("bb0:\n br bb0\nbb1:\n ret\n");
        assert!(!c.is_reachable(Block(1)));
        assert_eq!(c.immediate_post_dominator(Block(0)), None);
        assert_eq!(c.immediate_dominator(Block(1)), None);
    }
}
