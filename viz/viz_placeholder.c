/* replaced by the view model */ typedef int viz_placeholder_unused;
