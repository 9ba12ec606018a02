# Sweeps, fits, plots, claims and hardware presets.
fasim_test(test_fit       LABEL unit LIBS fasim_study m)
fasim_test(test_sweep     LABEL unit LIBS fasim_study m)
fasim_test(test_claims    LABEL unit LIBS fasim_study m)
fasim_test(test_sweep_cli LABEL cli  LIBS fasim_study ARGS $<TARGET_FILE:fasim>)
