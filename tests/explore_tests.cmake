# fasim explore: the model and the text frames against golden files,
# and the interactive screen under tmux.
fasim_test(test_explore      LABEL viz LIBS fasim_viz m
           ARGS $<TARGET_FILE:fasim> ${CMAKE_CURRENT_SOURCE_DIR}/golden)
fasim_test(test_explore_tmux LABEL viz ARGS $<TARGET_FILE:fasim>)
