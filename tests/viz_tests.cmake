# Tests of viz/: the view model step by step, the text renderer against
# golden frames, and the terminal view under tmux.
fasim_test(test_viz_model LABEL viz LIBS fasim_viz m)
fasim_test(test_viz_text  LABEL viz LIBS fasim_viz
           ARGS $<TARGET_FILE:fasim> ${CMAKE_CURRENT_SOURCE_DIR}/golden)
fasim_test(test_viz_tmux  LABEL viz ARGS $<TARGET_FILE:fasim>)
