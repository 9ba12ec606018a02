# Sweeps, fits, plots, claims and hardware presets.
fasim_test(test_fit       LABEL unit LIBS fasim_study m)
fasim_test(test_sweep     LABEL unit LIBS fasim_study m)
fasim_test(test_claims    LABEL unit LIBS fasim_study m)
fasim_test(test_sweep_cli LABEL cli  LIBS fasim_study ARGS $<TARGET_FILE:fasim>)
# fasim validate: the GPU model against the published figures.
fasim_test(test_validate  LABEL cli  LIBS fasim_study m
           ARGS $<TARGET_FILE:fasim> ${PROJECT_SOURCE_DIR}/bench/published/gpu-figures.tsv)
