package custodian
