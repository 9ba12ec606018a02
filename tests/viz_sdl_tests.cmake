# Tests of viz/sdl/ (included only when the fasim_viz_sdl target exists):
# screenshots, the PNG writer, the heat map and the window on SDL's dummy
# video driver, all without a display.
fasim_test(test_viz_sdl LABEL viz LIBS fasim_viz_sdl m)
# The window test drives the event loop from a thread; if a change ever made
# the loop miss its 'q', fail in a minute rather than hang the suite.
set_tests_properties(test_viz_sdl PROPERTIES TIMEOUT 120)
fasim_test(test_view_sdl_cli LABEL viz ARGS $<TARGET_FILE:fasim>)
# --record's GIFs are read back with giflib's decoder, when the build has it.
find_package(GIF QUIET)
if(TARGET GIF::GIF AND FASIM_WITH_GIF)
  target_link_libraries(test_view_sdl_cli PRIVATE GIF::GIF)
  target_compile_definitions(test_view_sdl_cli PRIVATE FASIM_HAVE_GIF)
endif()
