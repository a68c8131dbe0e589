"""Word pools of the template needles (:mod:`suites.minea.needlegen`): the haystacks' domain,
in-vitro diagnostic device submissions. Data only.

Every keyword of a template needle is drawn from one of these pools or made of Faker values
(names, companies, cities, years), so two needles of one type share a keyword only by
chance; :mod:`suites.minea.collisions` keeps those that share more than one out of a
document.
"""

from __future__ import annotations

ANALYTES = (
    "troponin I", "ferritin", "procalcitonin", "cortisol", "lactate", "D-dimer",
    "hemoglobin A1c", "cystatin C", "bilirubin", "lipase", "homocysteine", "fibrinogen",
    "myoglobin", "amylase", "haptoglobin", "prealbumin", "ceruloplasmin", "osteocalcin",
    "calprotectin", "galectin-3", "copeptin", "presepsin", "transferrin", "antithrombin",
)  # fmt: skip
SPECIMENS = (
    "capillary whole blood", "serum", "plasma", "urine", "saliva", "venous blood",
    "arterial blood", "cerebrospinal fluid", "nasal swab", "interstitial fluid",
)  # fmt: skip
METHODS = (
    "chemiluminescence", "immunoturbidimetry", "flow cytometry", "electrochemistry",
    "fluorescence polarization", "microfluidic immunoassay", "mass spectrometry",
    "lateral flow", "nephelometry", "surface plasmon resonance", "isothermal amplification",
    "digital PCR",
)  # fmt: skip
SETTINGS = (
    "point-of-care", "central laboratory", "emergency department", "home use",
    "intensive care", "outpatient clinic", "mobile laboratory", "physician office",
)  # fmt: skip
GREEK = ("Alpha", "Beta", "Gamma", "Delta", "Kappa", "Sigma", "Omega", "Theta", "Zeta", "Lambda")
PREFIX = ("Vero", "Luma", "Cyta", "Nexa", "Quora", "Hema", "Sero", "Tria", "Ocula", "Meda",
          "Zora", "Kira", "Pola", "Vanta", "Ilex")  # fmt: skip
SUFFIX = ("lin", "zyme", "tide", "xin", "plex", "sol", "mab", "gen", "trin", "stat", "vex", "dra")
ORGANS = ("hepatic", "renal", "cardiac", "pulmonary", "thyroid", "pancreatic", "splenic",
          "adrenal", "gastric", "cutaneous")  # fmt: skip
SYMPTOMS = ("fatigue", "jaundice", "oedema", "fever", "pruritus", "tremor", "syncope",
            "dyspnoea", "arthralgia", "night sweats")  # fmt: skip
ROLES = (
    "regulatory affairs director", "clinical chemist", "quality engineer",
    "laboratory director", "biostatistician", "assay development scientist",
    "medical director", "field application specialist", "clinical study manager",
)  # fmt: skip
STUDIES = (
    "method comparison", "precision study", "reproducibility study", "interference study",
    "linearity study", "stability study", "clinical validation", "matrix comparison",
    "detection limit study", "carry-over study",
)  # fmt: skip
EVENTS = ("Symposium", "Workshop", "Summit", "Consensus Meeting", "Forum", "Colloquium")
TOPICS = (
    "Assay Harmonization", "Point-of-Care Quality", "Calibrator Traceability",
    "Reference Interval", "Interference Testing", "Sample Stability", "Biomarker Validation",
    "Laboratory Automation", "External Quality Assessment", "Measurement Uncertainty",
)  # fmt: skip
AUDIENCES = ("clinical laboratories", "manufacturers", "regulators", "pathologists",
             "nurses", "payers", "patient groups", "engineers")  # fmt: skip
OUTCOMES = ("recommendations", "consensus statement", "white paper", "guideline draft",
            "position paper", "checklist")  # fmt: skip
LAW_TOPICS = ("Diagnostic Accuracy", "Laboratory Data", "Test Labeling", "Assay Recall",
              "Specimen Privacy", "Direct-to-Consumer Testing", "Laboratory Licensing",
              "Genetic Testing")  # fmt: skip
DUTIES = ("labeling", "reporting", "recall notices", "record keeping", "audits",
          "registration", "proficiency testing", "adverse event reports")  # fmt: skip
SANCTIONS = ("fines", "license suspension", "public notice", "corrective action plans",
             "civil penalties")  # fmt: skip
SALTS = ("HEPES", "Tris", "MOPS", "PBS", "citrate", "borate", "MES", "glycine")
STABILISERS = ("bovine serum albumin", "trehalose", "sucrose", "glycerol", "casein",
               "gelatin", "polyethylene glycol")  # fmt: skip
PRESERVATIVES = ("sodium azide", "ProClin 300", "thimerosal", "gentamicin", "Kathon CG",
                 "sodium benzoate")  # fmt: skip
SPECIES = ("human", "murine", "bovine", "porcine", "rabbit", "recombinant")
DESIGNS = ("multicenter", "single-center", "prospective", "retrospective", "randomised",
           "crossover")  # fmt: skip
COMPARATORS = ("reference method", "predicate device", "clinical diagnosis", "culture",
               "imaging", "expert panel")  # fmt: skip
TEMPERATURES = ("room temperature", "4 degrees Celsius", "37 degrees Celsius",
                "minus 20 degrees Celsius", "direct sunlight")  # fmt: skip
EFFECTS = ("positive bias", "negative bias", "haemolysis", "clotting", "evaporation",
           "glycolysis", "protein degradation")  # fmt: skip
THINGS = ("calibration cartridge", "sample rotor", "reagent pack", "cuvette tray",
          "lancet guide", "pipette tip rack", "sensor cassette", "wash station")  # fmt: skip
MATERIALS = ("polycarbonate", "borosilicate glass", "medical-grade silicone", "polystyrene",
             "polypropylene", "anodised aluminium", "cyclic olefin copolymer")  # fmt: skip
CONSUMABLES = ("test strip", "cartridge", "cuvette", "reagent disc", "sensor chip", "swab kit")
MARKETS = ("rural clinics", "veterinary laboratories", "pharmacy testing", "home monitoring",
           "sports medicine", "long-term care", "school health services", "military medicine",
           "travel clinics")  # fmt: skip
DRIVERS = ("ageing populations", "reimbursement changes", "decentralised testing",
           "shorter turnaround", "workforce shortages", "telehealth growth",
           "antibiotic stewardship")  # fmt: skip
PRODUCTS = ("reagents", "calibrators", "quality controls", "test strips", "cartridges",
            "antibodies", "microplates")  # fmt: skip
STANDARDS = ("ISO 13485", "ISO 15189", "ISO 9001", "MDSAP", "ISO 14971", "IEC 62304")
ORG_KINDS = ("Diagnostics", "Biosystems", "Laboratories", "Bioscience", "Assay Works")
SITE_USES = ("method comparison", "precision testing", "field trials", "usability testing",
             "sample banking", "reference testing")  # fmt: skip
PRODUCT_KINDS = ("Analyzer", "Reader", "Test System", "Meter", "Monitor", "Platform")
