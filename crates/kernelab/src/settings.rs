//! Turning shared command-line arguments into the use cases' settings.

use crate::cli::{GroupArg, RankArgs};
use kernelab_commands::rank::RankSettings;

/// Ranking settings as the user gave them in `RankArgs`.
pub(crate) fn rank_settings(args: &RankArgs) -> RankSettings {
    RankSettings {
        family: args.group == GroupArg::Family,
        rules: args.rules.clone(),
        name: args.name.clone(),
        device: args.device,
        stream: args.stream,
        time_range: args.time_range.clone(),
        top: args.top,
    }
}
